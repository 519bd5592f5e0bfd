"""How the compliance gate reads a description (``compliance.py``): its plain form, the classes
of use it may name, and the word families those classes share. Pure: stdlib only."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

SUPPORTED, NEEDS_REVIEW, UNSUPPORTED = "supported", "needs_review", "unsupported"

_DIGIT_GROUPS = re.compile(r"(?<=\d)[,.](?=\d{3}\b)")  # 10,000 is 10000
_APOSTROPHES = re.compile(r"['\u2018\u2019\u02bc`\u00b4]")
_CLAUSE_ENDS = re.compile(r"[.,;:!?()\[\]{}\"\u201c\u201d\u00ab\u00bb\n\r\u2026]+")
_OTHER_MARKS = re.compile(r"[^\w&.]+|_")


def plain(text: str) -> str:
    """The form the classes read: lower case, no apostrophes, marks as spaces, " . " between clauses."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = _APOSTROPHES.sub("", _DIGIT_GROUPS.sub("", text))
    text = _OTHER_MARKS.sub(" ", _CLAUSE_ENDS.sub(" . ", text))
    return " ".join(text.split())


@dataclass(frozen=True)
class UseCaseClass:
    name: str
    verdict: str
    reason: str
    keywords: tuple[str, ...]  # regular expressions on the plain text (``plain``), matched from a word's start
    pattern: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        joined = "|".join(f"(?:{keyword})" for keyword in self.keywords)
        object.__setattr__(self, "pattern", re.compile(rf"\b(?:{joined})"))

    def named_in(self, text: str) -> bool:
        return self.named_in_plain(plain(text))

    def named_in_plain(self, plain_text: str) -> bool:
        return self.pattern.search(plain_text) is not None


def _near(first: str, then: str, words: int) -> str:
    """``first`` (a word's start), then ``then`` at most ``words`` words later in the same clause."""
    return rf"(?:{first})\w*(?: \w+){{0,{words}}} (?:{then})"


def _any(*patterns: str) -> str:
    return "|".join(f"(?:{pattern})" for pattern in patterns)


# Word families the classes share (plain text; each matched from a word's start).
_MONEY = (r"(?:payments?|bills?|invoices?|balances?|accounts?|rent|rents|fees|dues|tuition|loans?|debts?|amounts?|"
         r"money|premiums?|installments?|instalments?|charges|tabs?|receivables|sums?|mortgages?|credit cards?|"
         r"taxes|child support)\b")
_STATE_WORDS = (r"(?:that|which|is|are|was|were|have|has|had|been|be|still|now|long|already|gone|left|getting|"
                r"become|becoming|got|go|goes|going|went|fell|fall|falls|falling|remain|remains|remained|stay|stays|"
                r"stayed|\d+|one|two|three|four|five|six|seven|eight|nine|ten|twelve|thirty|sixty|ninety|a|few|"
                r"several|many|some|more|than|over|days?|weeks?|months?|years?)")
_OWED = _any(  # money someone owes: the word that says so, or the words that say it is unpaid
    rf"(?:overdue|over due|unpaid|past due|delinquent|defaulted|unsettled|uncollected|in arrears)(?: \w+){{0,2}} "
    rf"{_MONEY}",
    rf"outstanding(?: \w+)? {_MONEY}",
    rf"(?:late|missed|skipped|bounced|failed|declined|returned)"
    rf"(?: (?:a|the|their|his|her|your|our|one|two|several|monthly|rent|loan))? {_MONEY}",
    rf"{_MONEY}(?: {_STATE_WORDS}){{0,4}} (?:overdue|over due|past due|unpaid|outstanding|in arrears|owed|owing|"
    r"delinquent|in default|in collections?|not paid|still due|left unpaid|gone unpaid|late|failed|declined|bounced|"
    r"returned|missed|rejected)\b",
    r"(?:who|they|you|customers?|clients?|people|patients|tenants|members|debtors|borrowers|residents|families|"
    r"parents|renters|buyers|businesses|he|she|someone|anyone) (?:still |now |currently )?(?:owe|owes)\b",
    r"what (?:they|you|he|she|people|customers|clients) (?:still )?owe\b",
    r"owed\b", r"owing\b(?! to)", r"arrears", r"non ?payments?\b", r"delinquen", r"defaulted\b",
    r"(?:default|defaults|defaulting) on\b", r"in default\b", r"debtors?\b",
    r"(?<!from )(?<!of )debts?\b(?! (?:relief|settlement|consolid|free|counsel|advice|management))",
    r"charged off|charge offs?\b|written off|write offs?\b", r"past due\b", r"insufficient funds",
    r"(?:havent|hasnt|have not|has not|didnt|did not|not yet|yet to|failed to|fail to|fails to|forgot to|forget to)"
    r" (?:\w+ )?(?:paid|pay)\b",
    r"never paid\b", r"stopped (?:paying|making (?:their |the |any )?payments)",
    r"(?:days|weeks|months|years|payments?) behind\b", r"repay\w*", r"pay\w* up\b(?! front)",
    r"late (?:in )?paying|(?:late|slow|non) payers?\b|slow (?:to pay|paying)", r"skip\w* out on\b",
    r"(?:left|leave|leaves|leaving|cancelled|canceled|walked out|walk out|skipped|moved out|disappeared) without "
    r"(?:paying|payment)\b",
    r"(?:get|gets|getting|got|win|recover\w*) (?:our|my) money back",
    rf"{_MONEY} (?:\w+ ){{0,2}}(?:havent|hasnt|have not|has not|isnt|is not|arent|are not|wasnt|was not|werent|"
    r"were not) (?:yet )?(?:been )?(?:paid|settled|cleared)\b",
    rf"(?:behind|late) (?:on|with) (?:\w+ ){{0,2}}{_MONEY}",
)
# Getting money someone owes: the verbs of debt collection.
_COLLECTING = (r"collect|recover|recoup|chase|chasing|pursu|hound|dunning|go after|goes after|going after|went after|"
               r"track down|tracking down|pressing|pressur|squeez|claw back|clawing back|demand")
_COLLECTING_AFTER = (r"(?:collect|recover|recoup)\w* (?:on|it|them|payments?|the money|what)\b|chas|pursu|"
                     r"(?:get|gets|getting|make|makes|making|force|forcing) (?:\w+ ){0,2}(?:to )?(?:re)?pay\b|"
                     r"demand\w* payments?")
_PEOPLE = (r"(?:customers|clients|patients|people|members|guests|parents|tenants|residents|owners|buyers|homeowners|"
          r"subscribers|donors|families|contacts|students|applicants|leads|prospects|users|borrowers|debtors|"
          r"voters|everyone)")
_STRANGERS = (r"(?:homeowners|consumers|households|people|residents|businesses|strangers|prospects|numbers|seniors|"
              r"retirees|renters|small businesses|random (?:people|numbers))")
_CALLING = (r"(?:call|calls|calling|phone|phones|phoning|ring|rings|ringing|dial|dials|dialing|dialling|text|texts|"
            r"texting)")
_MANY = (r"(?:thousands|hundreds|tens of thousands|\d{1,3}000|\d+k)\b(?: of)?(?: \w+)? (?:people|numbers|contacts|"
         r"households|homes|phones|customers|consumers|voters|residents|leads|prospects|subscribers|patients|members)")
_MASS = (r"(?:numbers|contacts|lists?|thousands|hundreds|everyone|every (?:number|household|home|phone|resident)|"
         r"all (?:our |the |of our )?(?:customers|members|subscribers|contacts|residents|households|numbers)|"
         r"households|residents|voters|homes|phones|consumers|prospects|leads|subscribers|database|\d{1,3}000)\b")
# Words between a calling verb and whom it calls, never "from", "for", "on"… (an answered call comes from someone).
_OBJECT_GAP = r"(?:(?!(?:from|for|on|at|in|about|with|by)\b)\w+ )"
_KIDS = (r"(?:kids|kid|children|childrens|child|youth|youths|teens?|teenagers?|tweens?|juniors?|toddlers?|infants?|"
        r"babies|baby|minors|preschoolers?|boys|girls)")
_FOR_KIDS = (r"(?:camps?|bootcamps?|sign ?ups?|registrations?|enrol\w*|enroll\w*|leagues?|programs?|programmes?|"
             r"clubs?|classes|lessons|tutoring|coaching|care|daycare|activities|hotline|helpline)")
_PEOPLE_TO_REACH = (r"(?:doctors?|nurses?|physicians?|pharmacists?|clinicians?|gp|counsell?ors?|therapists?|"
                    r"psychologists?)")
