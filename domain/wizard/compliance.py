"""The onboarding wizard's compliance gate (SPEC.md Wizard; docs/wizard.md): what a managed line,
which only answers calls, may be set up for. Each class names its keywords, its verdict and why.

A description gets the strictest verdict of the classes it names: ``unsupported`` (consent or
safety rules we cannot keep), then ``needs_review`` (a person decides), then the business class
it fits (``supported``, each with an offline configuration in ``configs.py``). Pure: stdlib only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

SUPPORTED, NEEDS_REVIEW, UNSUPPORTED = "supported", "needs_review", "unsupported"
GENERAL = "general"  # a business no class names: answering its callers is what any line does
UNCLEAR = "unclear"  # too few words to tell what the line is for
MIN_WORDS = 4


@dataclass(frozen=True)
class UseCaseClass:
    name: str
    verdict: str
    reason: str
    keywords: tuple[str, ...]  # regular expressions matched from a word's start, case-insensitive
    pattern: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        joined = "|".join(f"(?:{keyword})" for keyword in self.keywords)
        object.__setattr__(self, "pattern", re.compile(rf"\b(?:{joined})", re.IGNORECASE))

    def named_in(self, text: str) -> bool:
        return self.pattern.search(text) is not None


@dataclass(frozen=True)
class Assessment:
    verdict: str
    category: str  # the class's name, GENERAL or UNCLEAR
    reason: str


def _gated(name: str, verdict: str, reason: str, *keywords: str) -> UseCaseClass:
    return UseCaseClass(name, verdict, reason, keywords)


# Checked in this order; the first class named decides.
GATED: tuple[UseCaseClass, ...] = (
    _gated("debt_collection", UNSUPPORTED,
           "Debt collection is not supported: calls about debts fall under debt-collection law (required "
           "disclosures, validation notices, limits on contact and the debtor's consent records), which a "
           "managed line that only answers calls cannot keep.",
           r"debt[- ]?collect", r"collections? (agency|agencies|company|calls?)", r"debt recovery",
           r"collect(ing|s)? (on )?(unpaid |overdue |outstanding |past[- ]due |bad )?debts?",
           r"(collect|recover)(ing|s)? (unpaid|overdue|outstanding|past[- ]due|late) "
           r"(balances?|payments?|bills?|invoices?|accounts?|rent)", r"past[- ]due accounts?", r"repossess"),
    _gated("political_campaign", UNSUPPORTED,
           "Political campaigns are not supported: campaign and election calls need each person's prior "
           "express consent and carry disclosure rules that a line whose callers are unknown cannot hold.",
           r"politic", r"election", r"electoral", r"voters?\b", r"get out the vote", r"ballot", r"super ?pacs?\b",
           r"re-?elect", r"campaign (office|headquarters|hq|volunteers?|donations?|fund)",
           r"(run|running) for (office|mayor|senate|congress|governor|council|president)"),
    _gated("lead_generation_robocalls", UNSUPPORTED,
           "Lead generation and robocalls are not supported: automated or prerecorded sales calls need each "
           "recipient's prior express written consent, which an inbound-only line cannot collect.",
           r"robo-?call", r"lead[- ]?gen", r"cold[- ]?call", r"tele-?market", r"auto-?dial", r"voice broadcast",
           r"pre-?recorded (sales )?(messages?|calls?)", r"(mass|bulk|blast) (calls?|calling|dial)",
           r"(buy|sell|selling|generate|generating) leads", r"dial(ing)? (through )?(leads|prospects|lists)"),
    _gated("emergency_services", UNSUPPORTED,
           "Emergency services are not supported: a line people may call in an emergency must reach help "
           "reliably, and an AI agent must never stand between a caller and emergency help.",
           r"911\b", r"9-1-1", r"emergency (services?|dispatch|response|hotline|call cent)", r"ambulances?",
           r"paramedic", r"fire (department|brigade|station|rescue)", r"police", r"sheriff", r"crisis (line|hotline)",
           r"suicide", r"poison control", r"search and rescue"),
    _gated("health_advice", NEEDS_REVIEW,
           "Needs review: a line that answers medical questions, triages symptoms or handles prescriptions "
           "touches patient safety and health-privacy rules, so a person reviews the use case first.",
           r"medical advice", r"symptoms?", r"triage", r"prescriptions?", r"medications?", r"diagnos",
           r"tele-?health", r"tele-?medicine", r"nurse (line|hotline)", r"mental health", r"addiction"),
    _gated("financial_products", NEEDS_REVIEW,
           "Needs review: loans, credit, insurance sales and investments carry disclosure and licensing rules "
           "on what may be said to a caller, so a person reviews the use case first.",
           r"loans?\b", r"lend(er|ing)\b", r"mortgage", r"credit (repair|cards?|scores?|counsel)", r"payday",
           r"insurance (sales|quotes?|agen|broker|plans? for sale)", r"sell(ing|s)? insurance",
           r"invest(ment|ing|ors?)", r"crypto", r"forex", r"(stock|day|forex|crypto) trading",
           r"debt (relief|settlement|consolid)"),
    _gated("legal_services", NEEDS_REVIEW,
           "Needs review: what an agent tells a caller may read as legal advice, and intake can create duties "
           "to a client, so a person reviews the use case first.",
           r"law (firm|office|practice)", r"lawyers?", r"attorneys?", r"legal (advice|services?|aid|intake)",
           r"solicitors?\b", r"paralegal", r"injury claims?", r"bail bonds?"),
    _gated("fundraising", NEEDS_REVIEW,
           "Needs review: asking callers for donations has registration and disclosure rules that differ from "
           "place to place, so a person reviews the use case first.",
           r"donat", r"fund-?rais", r"charit", r"non-?profit", r"pledge drive"),
    _gated("outbound_calling", NEEDS_REVIEW,
           "Needs review: a managed line answers calls; placing calls to people (reminders, follow-ups, "
           "outreach) needs each person's consent on record, so a person reviews the use case first.",
           r"outbound", r"outreach", r"(reminder|follow[- ]?up|sales|courtesy) calls", r"dial(ing)? out",
           r"call(ing)? (through )?(lists?|leads|prospects|homeowners)\b",
           r"(place|placing|make|making) (phone )?calls to (our |my |their )?"
           r"(customers|clients|patients|members|people)"),
    _gated("age_restricted", NEEDS_REVIEW,
           "Needs review: gambling, adult and age-restricted goods depend on age checks and local licences, "
           "so a person reviews the use case first.",
           r"gambl", r"casino", r"betting", r"sportsbook", r"lotter", r"adult (entertainment|content|chat)",
           r"escorts?\b", r"cannabis", r"dispensar", r"vape", r"firearms?", r"gun (shop|store|range)", r"liquor"),
)


def _business(name: str, what: str, *keywords: str) -> UseCaseClass:
    return UseCaseClass(name, SUPPORTED, f"Supported: {what}, on a line that answers the calls callers "
                                         "start, with no calls placed to anyone.", keywords)


# Checked in this order (more specific first: a veterinary clinic is not a medical office).
BUSINESSES: tuple[UseCaseClass, ...] = (
    _business("veterinary", "a veterinary practice answering pet owners and booking visits",
              r"vets?\b", r"veterinar", r"animal (hospital|clinic)", r"pet (groom|boarding|sitting|care|clinic)",
              r"dog (groom|walk|daycare)", r"kennel", r"cattery"),
    _business("dental", "a dental practice answering patients and booking appointments",
              r"dent(al|ist)", r"orthodont", r"oral surg", r"hygienist"),
    _business("medical_office", "a medical office answering patients and booking appointments",
              r"clinic", r"doctors?'?s? (office|practice|surgery)", r"medical (office|practice|cent)", r"physio",
              r"physical therap", r"chiropract", r"optometr", r"optician", r"dermatolog", r"pediatric",
              r"family (practice|medicine)", r"podiatr", r"audiolog"),
    _business("restaurant", "a restaurant answering guests, taking reservations and hours questions",
              r"restaurant", r"caf(e|é)s?\b", r"bistro", r"pizz", r"diner\b", r"bakery", r"bakeries", r"take-?out",
              r"takeaway", r"catering", r"food truck", r"brewer(y|ies)", r"coffee (shop|house)", r"eatery",
              r"sushi", r"taco", r"steakhouse", r"gastropub", r"\bpub\b"),
    _business("salon_spa", "a salon or spa answering clients and booking appointments",
              r"salons?\b", r"barber", r"spas?\b", r"nails?\b", r"massage", r"beauty", r"hair ?(dress|cut|styl)",
              r"lash", r"brows?\b", r"waxing", r"tattoo", r"esthetic", r"aesthetic"),
    _business("home_services", "a home services business answering customers and booking jobs",
              r"plumb", r"electrician", r"hvac", r"heating", r"air condition", r"roof", r"handyman", r"maid",
              r"clean(ing|ers) (service|company|business)", r"house ?clean", r"locksmith", r"pest control",
              r"landscap", r"lawn", r"gutter", r"painting (contractor|company)", r"contractor", r"remodel",
              r"garage doors?", r"appliance repair", r"moving company", r"movers\b", r"pool (service|cleaning)"),
    _business("auto_services", "an auto services business answering drivers and booking service",
              r"auto ?(repair|shop|body|service|glass)", r"mechanic", r"car (repair|wash|service|detail)", r"tires?\b",
              r"tyres?\b", r"oil change", r"body shop", r"collision", r"towing", r"garage\b", r"transmission"),
    _business("hospitality", "a hotel or lodging answering guests and taking booking enquiries",
              r"hotels?\b", r"motels?\b", r"\binn\b", r"bed and breakfast", r"b&b", r"vacation rental", r"hostel",
              r"campground", r"guest ?house", r"lodge\b", r"resort"),
    _business("property_management", "a property manager answering residents and taking maintenance requests",
              r"property manag", r"apartments?", r"landlord", r"tenants?\b", r"leasing office", r"rental propert",
              r"hoa\b", r"homeowners'? association", r"condo", r"real estate", r"realtor"),
    _business("fitness", "a gym or studio answering members and booking classes",
              r"gyms?\b", r"fitness", r"yoga", r"pilates", r"crossfit", r"martial arts", r"dance (studio|school)",
              r"personal train", r"climbing (gym|wall)", r"swim school"),
    _business("retail_orders", "a shop answering customers about products, hours and order status",
              r"(online|e-?commerce|web|retail|gift|book|flower|hardware|furniture|clothing|shoe|toy|bike|bicycle|"
              r"pet|jewel+ery|jewelry|grocery|record|music|sports|outdoor|electronics?) (store|shop)", r"boutique",
              r"florist", r"order (status|tracking|updates?)",
              r"(track|tracking|check|status of) (an |their |your |my )?orders?", r"online orders?", r"shipping",
              r"webshop", r"shopify", r"stores?\b", r"shops?\b"),
    _business("professional_office", "a professional office answering clients and booking consultations",
              r"account(ant|ing)", r"bookkeep", r"tax (prep|return|service|advis)", r"consult", r"architect",
              r"agency", r"studio", r"photograph", r"tutor", r"school", r"day ?care", r"child ?care",
              r"it (support|services)",
              r"computer repair", r"translation", r"printing", r"recruit", r"staffing"),
)

ALL_CLASSES: tuple[UseCaseClass, ...] = (*GATED, *BUSINESSES)
_WORD = re.compile(r"[^\W\d_]{2,}")


def assess(text: str) -> Assessment:
    """The verdict of a description (or of a description with a configuration's texts)."""
    for verdict in (UNSUPPORTED, NEEDS_REVIEW):
        for gated in GATED:
            if gated.verdict == verdict and gated.named_in(text):
                return Assessment(verdict=verdict, category=gated.name, reason=gated.reason)
    for business in BUSINESSES:
        if business.named_in(text):
            return Assessment(verdict=SUPPORTED, category=business.name, reason=business.reason)
    if len(_WORD.findall(text)) < MIN_WORDS:
        return Assessment(verdict=NEEDS_REVIEW, category=UNCLEAR, reason=(
            "Needs review: the description is too short to tell what the line is for; say what the business "
            "does and what its callers need."))
    return Assessment(verdict=SUPPORTED, category=GENERAL, reason=(
        "Supported: a business answering its own callers (questions, messages, call-backs), on a line that "
        "answers the calls callers start, with no calls placed to anyone."))
