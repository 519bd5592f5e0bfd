"""The onboarding wizard's compliance gate (SPEC.md Wizard; docs/wizard.md): what a managed line,
which only answers calls, may be set up for. Each class names its keywords, its verdict and why.

A description gets the strictest verdict of the classes it names: ``unsupported`` (consent or
safety rules we cannot keep), then ``needs_review`` (a person decides), then the business class
it fits (``supported``, each with an offline configuration in ``configs.py``). Pure: stdlib only.

The classes read a description in its plain form (``plain``): lower case, apostrophes dropped
("haven't" is "havent", "kids'" is "kids"), every other mark a space, and " . " where a sentence
or clause ends, so that a pattern of several words never spans two clauses. A keyword matches from
a word's start, which covers a word's inflections ("remind" is "reminds", "reminded",
"reminders"); the families below name a concept's other words and phrasings (money owed: "overdue
invoices", "payments that are 60 days past due", "customers who haven't paid", "behind on rent").
A risky concept named in any wording is never ``supported``: when the wording says less than the
``unsupported`` class needs, it is ``needs_review``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from domain.wizard.businesses import BUSINESSES
from domain.wizard.phrasing import (NEEDS_REVIEW, SUPPORTED, UNSUPPORTED, _CALLING, _COLLECTING, _COLLECTING_AFTER,
                                    _FOR_KIDS, _KIDS, _MANY, _MASS, _OBJECT_GAP, _OWED, _PEOPLE, _PEOPLE_TO_REACH,
                                    _STRANGERS, UseCaseClass, _near, plain)

__all__ = ["ALL_CLASSES", "BUSINESSES", "GATED", "GENERAL", "NEEDS_REVIEW", "SUPPORTED", "UNCLEAR", "UNSUPPORTED",
           "Assessment", "UseCaseClass", "assess", "plain"]

GENERAL = "general"  # a business no class names: answering its callers is what any line does
UNCLEAR = "unclear"  # too few words to tell what the line is for
MIN_WORDS = 4


@dataclass(frozen=True)
class Assessment:
    verdict: str
    category: str  # the class's name, GENERAL or UNCLEAR
    reason: str


def _gated(name: str, verdict: str, reason: str, *keywords: str) -> UseCaseClass:
    return UseCaseClass(name, verdict, reason, keywords)


# Checked in this order within a verdict; the first class named decides.
GATED: tuple[UseCaseClass, ...] = (
    _gated("debt_collection", UNSUPPORTED,
           "Debt collection is not supported: calls about debts fall under debt-collection law (required "
           "disclosures, validation notices, limits on contact and the debtor's consent records), which a "
           "managed line that only answers calls cannot keep.",
           r"debt[- ]?collect", r"debt recovery", r"repossess", r"skip trac", r"dunning", r"bill collectors?",
           r"collections? (?:agency|agencies|company|companies|calls?|department|team|line|firm|bureau|work|"
           r"letters?|notices?|specialists?|agents?|process)\b",
           r"collect(ing|s)? (on )?(unpaid |overdue |outstanding |past[- ]due |bad )?debts?",
           r"(collect|recover)(ing|s)? (unpaid|overdue|outstanding|past[- ]due|late) "
           r"(balances?|payments?|bills?|invoices?|accounts?|rent)", r"past[- ]due accounts?",
           _near(_COLLECTING, _OWED, 5), _near(_OWED, _COLLECTING_AFTER, 3),
           r"(?:handle|handles|handling|manage\w*|outsourc\w*) (?:our |their |your |the )?(?:debt |payment |account |"
           r"accounts |receivables )?collections\b(?! of)",
           r"wage garnish|garnish\w* (?:\w+ ){0,2}wages", r"debt (?:buyers?|purchas\w*|portfolios?|collectors?)",
           r"(?:buy|buys|buying|bought|purchas\w*) (?:\w+ ){0,3}debts?\b",
           r"(?:owe|owes|owed|owing) (?:\w+ ){0,3}to (?:our|my) (?:clients|customers|creditors)",
           r"(?:get|gets|getting|got|win|recover\w*) (?:our|my) money back from"),
    _gated("political_campaign", UNSUPPORTED,
           "Political campaigns are not supported: campaign and election calls need each person's prior "
           "express consent and carry disclosure rules that a line whose callers are unknown cannot hold.",
           r"politic", r"election", r"electoral", r"voters?\b", r"get out the vote", r"ballot", r"super ?pacs?\b",
           r"re[- ]?elect", r"vot(?:e|es|ing)\b", r"canvass", r"phone ?bank", r"precincts?\b", r"caucus", r"referend",
           r"partisan", r"bipartisan", r"democrat", r"republicans?\b", r"gop\b",
           r"(?:labour|conservative|green|libertarian|liberal democrat|democratic|republican) party",
           r"polling (?:place|station|location|site)s?", r"(?:at|to) the polls\b", r"polls (?:open|close)",
           r"propositions? \d", r"prop \d",
           r"(?:run|runs|running|ran) for (?:\w+ ){0,2}(?:office|mayor|senate|congress|governor|council|president|"
           r"school board|sheriff|judge|assembly|legislature|parliament|seat|re ?election)",
           r"candidates? (?:for|running)\b",
           r"(?:rally|vote|volunteer|campaign|canvass\w*) for (?:\w+ ){0,2}candidates?",
           r"endors\w* (?:\w+ ){0,2}candidates?", r"pro \w+ candidates?", r"pacs?\b", r"the midterms\b",
           r"(?:midterm|presidential|mayoral|gubernatorial|congressional|senate|senatorial|municipal|council|"
           r"school board|state house|legislative) (?:races?|campaigns?|candidates?|elections?|seats?|primar)",
           r"primar(?:y|ies) (?:elections?|races?|campaigns?|day|voters)",
           r"(?:for|4) (?:mayor|governor|senate|congress|sheriff|president|city council|school board|judge|"
           r"district attorney|state (?:senate|house|assembly))\b",
           r"(?:mayor|senator|governor|sheriff|president|congressman|congresswoman|judge|councilman|councilwoman|"
           r"councillor) \w+ (?:19|20)\d\d\b",
           r"campaign (?:to elect|rall|signs?|headquarters|hq|volunteers?|donations?|fund|contributions?|literature|"
           r"office)"),
    _gated("lead_generation_robocalls", UNSUPPORTED,
           "Lead generation and robocalls are not supported: automated or prerecorded sales calls need each "
           "recipient's prior express written consent, which an inbound-only line cannot collect.",
           r"robo[- ]?(?:call|dial)", r"lead[- ]?gen", r"cold[- ]?call", r"cold (?:outreach|dial|prospecting|texts?)",
           r"tele[- ]?market", r"tele ?sales", r"auto[- ]?dial", r"voice broadcast", r"ringless",
           r"(?:voice ?mail|voice) drops?", r"(?:predictive|power|outbound) dial", r"dialers?\b|diallers?\b",
           r"pre[- ]?recorded (?:\w+ ){0,2}(?:messages?|calls?|announcements?|pitch\w*|offers?|sales|promos?|ads?|"
           r"adverts?|advertisements?|spots?)",
           rf"blast\w* (?:\w+ ){{0,3}}(?:to|out to) (?:\w+ ){{0,2}}{_MASS}",
           r"(mass|bulk|blast) (calls?|calling|dial)", r"mass (?:texts?|texting|sms|messages?|messaging|"
           r"notifications?|call outs?)", r"(?:sms|text|voice|phone|call|voicemail) blasts?",
           r"(?:buy|buys|buying|sell|sells|selling|generate|generates|generating|resell\w*) (?:(?:qualified|exclusive|"
           r"warm|hot|fresh|aged|real time|insurance|solar|mortgage|medicare|home improvement) )?leads",
           r"dial(ing)? (through |thru )?(?:our |the |a |my |your )?(leads|prospects|lists?|numbers|contacts)",
           r"qualif\w* (?:\w+ ){0,2}(?:leads|prospects)",
           r"lead (?:lists?|buyers?|vendors?|brokers?|generation)", r"appointment setters?",
           r"appointment setting (?:for|on behalf of|services?)\b",
           r"(?:purchased|bought|rented|bulk|scraped|third party|3rd party|aged) (?:\w+ ){0,2}(?:lists?|numbers|"
           r"contacts|leads|data)\b",
           r"unsolicited", r"spam (?:calls?|texts?|messages?)", r"(?:do not call|dnc) (?:lists?|registry|scrub)",
           r"extended (?:\w+ ){0,2}warrant", r"expired listings|fsbos?\b|for sale by owners?",
           rf"{_CALLING} {_OBJECT_GAP}{{1,4}}to (?:win|land|drum up|pick up|find) (?:new |more )?(?:\w+ )?(?:clients|"
           r"customers|business|deals)\b", r"press (?:1|one) (?:campaigns?|calls?|messages?)",
           rf"(?:sales|marketing|promotional|promo) (?:calls?|calling|pitch\w*|campaigns?|texts?) (?:\w+ ){{0,2}}"
           rf"(?:to|for|at|targeting) (?:\w+ ){{0,2}}{_STRANGERS}",
           rf"{_CALLING} {_OBJECT_GAP}{{0,4}}{_STRANGERS} (?:\w+ ){{0,4}}"
           r"(?:to (?:sell|pitch|offer|promote|market)|about "
           r"(?:\w+ ){0,2}(?:offers?|deals?|specials?|promotions?|discounts?|products))",
           rf"{_CALLING} {_OBJECT_GAP}{{0,3}}{_STRANGERS} (?:who|that) (?:have |has )?(?:never|didnt|did not|havent|"
           r"have not|hasnt) (?:\w+ ){0,2}(?:asked|requested|signed up|opted in|agreed|consented|contacted|inquired|"
           r"enquired|heard)",
           r"(?:recorded|automated|robotic|computer|voice) (?:\w+ ){0,2}"
           rf"(?:messages?|announcements?|pitch\w*|offers?|promos?) (?:\w+ ){{0,4}}(?:to|out to) "
           rf"(?:\w+ ){{0,3}}{_MASS}",
           r"(?:automated|automatic|robotic|computer|computerized|machine)(?: (?:outbound|sales|marketing|voice|phone|"
           r"promotional))? (?:calls|calling|dialing|dialling|phone calls) (?:\w+ ){0,2}(?:to|out to) "
           rf"(?:\w+ ){{0,3}}{_MASS}",
           rf"(?:call|calling|dial|dialing|dialling|ring|ringing|phone|phoning|text|texting|blast|blasting) "
           rf"{_OBJECT_GAP}{{0,2}}{_MANY}",
           rf"{_CALLING} {_OBJECT_GAP}{{0,2}}(?:every|each|all) (?:\w+ )?(?:number|numbers|household|households|home|"
           r"homes|phone|phones|resident|residents|voter|voters|business|businesses|company|companies)\b",
           rf"{_CALLING} {_OBJECT_GAP}{{0,4}}(?:yellow pages|phone ?books?|directory|directories)\b"),
    _gated("emergency_services", UNSUPPORTED,
           "Emergency services are not supported: a line people may call in an emergency must reach help "
           "reliably, and an AI agent must never stand between a caller and emergency help.",
           r"911\b", r"9[- ]1[- ]1\b", r"emergency (services?|dispatch|response|hotline|call cent)", r"ambulances?",
           r"paramedic", r"fire (department|brigade|station|rescue)", r"police", r"sheriff", r"crisis (line|hotline)",
           r"suicide", r"poison control", r"search and rescue"),
    _gated("health_advice", NEEDS_REVIEW,
           "Needs review: a line that answers medical questions, triages symptoms or handles prescriptions "
           "touches patient safety and health-privacy rules, so a person reviews the use case first.",
           r"medical advice", r"symptoms?", r"triage", r"prescri", r"medications?", r"diagnos",
           r"tele[- ]?health", r"tele[- ]?medicine", r"nurse (line|hotline)", r"mental health", r"addiction",
           r"medical (?:questions?|records?|history|conditions?|concerns?|information|results|issues?|problems?|"
           r"emergenc|tests?)",
           r"(?<!pet )(?<!animal )(?<!dental )health ?care\b",
           r"health (?:advice|questions?|concerns?|conditions?|problems?|issues?|information|"
           r"records?|coach|screen|assessments?|plans?)",
           r"(?:lab|labs|test|blood test|biopsy|scan|x ray|mri|screening) results", r"lab (?:tests?|testing|work)",
           r"blood (?:tests?|work|pressure|sugar|glucose|draws?)", r"pharmac", r"drugs?\b", r"drugstores?", r"meds\b",
           r"pills?\b", r"dos(?:e|es|age|ages|ing)\b", r"rx\b", r"side effects?", r"covid",
           r"(?:flu|covid|booster|hpv|shingles) (?:shots?|jabs?|vaccin)",
           rf"(?:speak|speaking|talk|talking|chat|chatting|consult|consulting) (?:\w+ ){{0,2}}(?:to|with) "
           rf"(?:a|an|the|our|their|your) (?:\w+ )?{_PEOPLE_TO_REACH}",
           r"(?:doctors?|nurses?|physicians?|clinicians?|gp) on call",
           r"on call (?:doctors?|nurses?|physicians?|clinicians?)",
           r"nurses? (?:advice|triage)", r"ask a (?:doctor|nurse|pharmacist)", r"wound care",
           r"(?:nurses?|doctors?|physicians?|pharmacists?|clinicians?) (?:\w+ ){0,2}(?:advice|advise|advises|"
           r"advising)",
           r"anxiety|depression|ptsd|adhd|bipolar|schizophren|eating disorders?|insomnia|substance (?:abuse|use)|"
           r"detox|rehab\b|sober|sobriety|overdos|opioid|alcoholism|alcohol (?:abuse|addiction|dependence|treatment)",
           r"psychotherap|psychiatr|psycholog|counsell?ing (?:practice|service|sessions?|center|centre)",
           r"(?:family|marriage|couples|grief|trauma|talk|behavioral|behavioural) (?:therap|counsel)",
           r"(?<!massage )(?<!physical )(?<!sports )(?<!speech )(?<!occupational )therap(?:y|ies|ist|ists)\b",
           r"semaglutide|ozempic|wegovy|mounjaro|glp ?1\b|botox|injectables|(?:dermal|lip|facial) fillers?",
           r"weight loss (?:injections?|medications?|drugs?|shots?|jabs?|clinic)",
           r"hormone (?:therapy|replacement|treatment)|testosterone|iv (?:therapy|drips?|hydration|vitamin)",
           r"hospice|home health|palliative|dialysis|chemo|oncolog|cancer (?:care|treatment|patients)",
           r"fertility|ivf\b|sperm|egg dono|surroga|abortion|contracepti|birth control|sexual health|stds?\b|"
           r"stis?\b|hiv\b",
           r"illness|unwell|feel\w* (?:sick|ill|unwell)\b|fever|rash(?:es)?\b|infection|chest pains?|urgent care|"
           r"panic attacks?|"
           r"mental (?:wellness|illness)|emotional (?:support|wellbeing|health)|(?:where|what) (?:it )?hurts|"
           r"see a (?:doctor|gp|physician|nurse)\b|ketamine|infusions?\b|"
           r"emergency rooms?|(?:go|goes|going|went) to (?:the )?(?:er|a&e|hospital)\b|over the counter|"
           r"(?:which|what|advis\w*|recommend\w*) (?:\w+ ){0,3}(?:medicines?|remed(?:y|ies))\b",
           r"what (?:\w+ )?to take\b", r"(?:which|what) (?:\w+ ){0,2}(?:vaccines?|vaccinations?|shots|immuni)",
           r"(?:supplements?|vitamins?|herbs?|herbal|remed(?:y|ies)) (?:\w+ ){0,4}(?:for|to treat|to cure|against) "
           r"(?:\w+ ){0,2}(?:pain|arthritis|joints?|anxiety|sleep|insomnia|diabetes|blood pressure|cholesterol|"
           r"illness|conditions?|symptoms)"),
    _gated("financial_products", NEEDS_REVIEW,
           "Needs review: loans, credit, insurance sales and investments carry disclosure and licensing rules "
           "on what may be said to a caller, so a person reviews the use case first.",
           r"loans?\b", r"lend(?:er|ers|ing)\b", r"lend (?:\w+ ){0,2}(?:money|cash|up to|funds|\d)", r"mortgage",
           r"credit (repair|scores?|counsel)", r"payday",
           r"credit cards? (?:offers?|applications?|approvals?|debt|balances?|issuers?|compan\w*|sales|rewards)",
           r"(?:apply|applying|applications?|approved|approval) (?:\w+ ){0,2}credit cards?",
           r"insurance (sales|quotes?|agen|broker|plans? for sale)", r"sell(ing|s)? insurance",
           r"invest(ment|ing|ors?)", r"crypto", r"forex", r"(stock|day|forex|crypto) trading",
           r"debt (relief|settlement|consolid)",
           r"cash advances?", r"(?:paycheck|paycheque|salary|wage|payroll|merchant cash) advances?",
           r"advance on (?:\w+ ){0,2}(?:pay|paycheck|paycheque|salary|wages|payday)\b", r"pawn",
           r"borrowers?\b", r"borrow\w* (?:\w+ ){0,2}(?:money|cash|funds|up to|against|\d)", r"refinanc",
           r"home equity", r"heloc", r"equity release", r"lines? of credit|credit lines?",
           r"credit (?:unions?|checks?|limits?|builder|history|approvals?|reports?)",
           r"(?:bad|poor|no|low|fair) credit\b(?! cards?)", r"interest rates?", r"annual percentage rate",
           r"buy now (?:\. )?pay later|bnpl",
           r"(?:car|auto|vehicle|personal|business|student|home|consumer|installment|instalment|title|bridge|"
           r"equipment) financ", r"(?:quick|fast|easy|instant) (?:cash|money|funds)",
           r"banking|bank accounts?|savings accounts?|checking accounts?", r"(?:wealth|asset|portfolio) manag",
           r"financial (?:advi[cs]|planning|planners?|products?)", r"retirement (?:planning|savings|accounts?|plans?)",
           r"401 ?k\b", r"annuit", r"(?:rent|lease) to (?:own|buy)\b", r"brokerage",
           r"(?:stocks?|shares|bonds|securities|options) (?:trading|brokers?|advice|tips)",
           r"(?:sell|sells|selling|offer|offers|offering|enrol\w*|enroll\w*|sign\w* (?:\w+ )?up) (?:\w+ ){0,2}"
           r"(?:health |life |medicare |final expense )?(?:insurance|medicare plans?)",
           r"medicare (?:advantage|plans?|supplement|enrol)", r"(?:life|term life|final expense) insurance"),
    _gated("money_owed", NEEDS_REVIEW,
           "Needs review: calls about money people owe (overdue, unpaid or late payments, balances in arrears) "
           "come close to debt collection, whose rules on disclosures and contact a managed line cannot keep, so "
           "a person reviews the use case first.",
           _OWED, r"debts?\b", r"evict"),
    _gated("legal_services", NEEDS_REVIEW,
           "Needs review: what an agent tells a caller may read as legal advice, and intake can create duties "
           "to a client, so a person reviews the use case first.",
           r"law (firm|office|practice)", r"lawyers?", r"attorneys?", r"legal (advice|services?|aid|intake)",
           r"solicitors?\b", r"paralegal", r"injury claims?", r"bail bonds?"),
    _gated("fundraising", NEEDS_REVIEW,
           "Needs review: asking callers for donations has registration and disclosure rules that differ from "
           "place to place, so a person reviews the use case first.",
           r"donat", r"fund[- ]?rais", r"charit", r"non[- ]?profit", r"pledge drive"),
    _gated("public_office_advocacy", NEEDS_REVIEW,
           "Needs review: an elected official's office, a government body or an advocacy group speaks for a public "
           "office or a cause, close to the rules on political calls, so a person reviews the use case first.",
           r"constituen", r"lawmakers?", r"legislat(?:or|ors|ure|ures|ive)\b", r"senators?\b",
           r"congress(?:man|men|woman|women|person|ional)\b", r"assembly ?(?:man|men|woman|women|members?)\b",
           r"alder(?:man|men|woman|women|person)\b", r"council ?(?:man|men|woman|women|members?|lors?|ors?)\b",
           r"state (?:representatives?|reps?)\b", r"members? of parliament", r"mps? office",
           r"(?:mayors|governors) office", r"elected (?:officials?|representatives?|leaders?)",
           r"lobbying|lobbyists?", r"advocacy",
           r"petition (?:drive|signatures?)|sign (?:our|the|a) petition|signature gathering|collect\w* signatures",
           r"(?:city|town|county|state|federal|local) government",
           r"government (?:office|agency|agencies|department)s?"),
    _gated("outbound_calling", NEEDS_REVIEW,
           "Needs review: a managed line answers calls; placing calls to people (reminders, follow-ups, "
           "outreach) needs each person's consent on record, so a person reviews the use case first.",
           r"outbound", r"outreach", r"(reminder|follow[- ]?up|sales|courtesy) calls", r"dial(ing)? out",
           r"call(ing)? (through )?(lists?|leads|prospects|homeowners)\b",
           r"(place|placing|make|making) (phone )?calls to (our |my |their )?"
           r"(customers|clients|patients|members|people)",
           rf"{_CALLING} (?:our |their |all |every |existing |past |former |new |the |those |each )?{_PEOPLE}\b"
           r"(?! back)",
           rf"remind(?:s|ing|ed)?\b (?:\w+ )?{_PEOPLE}\b", r"remind (?:them|him|her)\b",
           rf"follow\w* up (?:with|on) (?:\w+ ){{0,2}}{_PEOPLE}\b",
           r"reminders? (?:calls?|by phone|over the phone|phone calls?)\b(?! back)",
           r"(?:reminder|follow ?up|courtesy|survey|satisfaction|feedback|check in|win back|renewal|upsell|"
           r"marketing) (?:phone )?calls?\b(?! back)",
           rf"win back (?:\w+ ){{0,2}}{_PEOPLE}"),
    _gated("age_restricted", NEEDS_REVIEW,
           "Needs review: gambling, adult and age-restricted goods depend on age checks and local licences, "
           "so a person reviews the use case first.",
           r"gambl", r"casino", r"betting", r"sportsbook", r"lotter", r"adult (entertainment|content|chat)",
           r"escorts?\b", r"cannabis", r"dispensar", r"vape", r"firearms?", r"gun (shop|store|range)", r"liquor"),
    _gated("minors", NEEDS_REVIEW,
           "Needs review: a line that signs up, enrols or looks after children, or that children call, records a "
           "child's details and voice; parental consent and children's privacy rules apply, so a person reviews "
           "the use case first.",
           r"minors\b", r"underage", r"under the age of", r"(?:under|younger than) (?:13|16|18)\b(?! (?:minutes|mins|"
           r"miles|dollars|pounds|euros|kg|lbs))", r"coppa",
           rf"{_KIDS} (?:\w+ ){{0,3}}{_FOR_KIDS}\b",
           rf"(?:register|registers|registering|registration|enrol\w*|enroll\w*|sign|signs|signing) (?:\w+ ){{0,3}}"
           rf"{_KIDS}\b",
           rf"(?:{_FOR_KIDS}|line|chat|school|sessions|services?) for (?:\w+ ){{0,2}}{_KIDS}\b",
           rf"{_KIDS} (?:can|may|will|who|to) (?:call|phone|ring|text|chat)\b",
           rf"(?:where|that|which|so) {_KIDS} (?:can |may |will )?(?:call|phone|ring|text|chat)\b",
           r"(?<!dog )(?<!dogs )(?<!doggy )(?<!doggie )(?<!pet )(?<!adult )(?<!senior )(?<!elder )day ?care"
           r"(?! for (?:dogs|pets|cats|puppies|adults|seniors))",
           r"child ?care|childminde?r?|childminding|preschool|pre school|nursery school|kindergarten|babysit|"
           r"nann(?:y|ies)\b|au pairs?\b|after ?school|summer camps?|day camps?|sleepaway|little leagues?|pee ?wee",
           r"youth (?:sports|leagues?|soccer|football|baseball|basketball|hockey|groups?|ministry|centers?|centres?|"
           r"programs?|programmes?)",
           r"(?:ages?|aged) (?:\d|1[0-7]) (?:to|through|thru|and|or) (?:\d|1[0-7])\b",
           r"grades? (?:k|\d|1[0-2]) (?:to|through|thru|and) (?:\d|1[0-2])\b", r"(?:\d|1[0-7]) year olds\b",
           r"(?:\d|1[0-7]) year old (?:son|daughter|child|kid|boy|girl)s?\b",
           r"high ?school(?:ers| students| kids| pupils)|(?:middle|elementary|primary|secondary|grade) school "
           r"(?:students|pupils|kids|children)|schoolchildren|school ?kids|school pupils",
           r"(?<!boot )camp (?:registration|sign ?ups?|enrol|enroll)"),
)


ALL_CLASSES: tuple[UseCaseClass, ...] = (*GATED, *BUSINESSES)
_WORD = re.compile(r"[^\W\d_]{2,}")


def assess(text: str) -> Assessment:
    """The verdict of a description (or of a description with a configuration's texts)."""
    plain_text = plain(text)
    for verdict in (UNSUPPORTED, NEEDS_REVIEW):
        for gated in GATED:
            if gated.verdict == verdict and gated.named_in_plain(plain_text):
                return Assessment(verdict=verdict, category=gated.name, reason=gated.reason)
    for business in BUSINESSES:
        if business.named_in_plain(plain_text):
            return Assessment(verdict=SUPPORTED, category=business.name, reason=business.reason)
    if len(_WORD.findall(text)) < MIN_WORDS:
        return Assessment(verdict=NEEDS_REVIEW, category=UNCLEAR, reason=(
            "Needs review: the description is too short to tell what the line is for; say what the business "
            "does and what its callers need."))
    return Assessment(verdict=SUPPORTED, category=GENERAL, reason=(
        "Supported: a business answering its own callers (questions, messages, call-backs), on a line that "
        "answers the calls callers start, with no calls placed to anyone."))
