"""The businesses a managed line answers for (``compliance.py``): each class names its keywords and
what the line does for it; checked in order, more specific first. Pure: stdlib only."""

from __future__ import annotations

from domain.wizard.phrasing import SUPPORTED, UseCaseClass


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
              r"restaurant", r"caf(e|é)s?\b", r"bistro", r"pizz", r"diner\b", r"bakery", r"bakeries", r"take[- ]?out",
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
              r"(online|e[- ]?commerce|web|retail|gift|book|flower|hardware|furniture|clothing|shoe|toy|bike|bicycle|"
              r"pet|jewel+ery|jewelry|grocery|record|music|sports|outdoor|electronics?) (store|shop)", r"boutique",
              r"florist", r"order (status|tracking|updates?)",
              r"(track|tracking|check|status of) (an |their |your |my )?orders?", r"online orders?", r"shipping",
              r"webshop", r"shopify", r"stores?\b", r"shops?\b"),
    _business("professional_office", "a professional office answering clients and booking consultations",
              r"account(ant|ing)", r"bookkeep", r"tax (prep|return|service|advis)", r"consult", r"architect",
              r"agency", r"studio", r"photograph", r"tutor", r"school", r"it (support|services)",
              r"computer repair", r"translation", r"printing", r"recruit", r"staffing"),
)
