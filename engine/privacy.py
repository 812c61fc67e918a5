"""Personal data in text: found and masked before it is shown, stored, logged or sent to a model."""

from __future__ import annotations

import re

from ..kb.text import words

_PII = [
    ("ssn", re.compile(r"\b(?!000|666|9\d\d)\d{3}[- ](?!00)\d{2}[- ](?!0000)\d{4}\b"), "[SSN]"),
    ("ssn", re.compile(r"(?i)(\b(?:ssn|social security(?: number)?)\b\D{0,12})(\d{9})\b"), None),
    # (a match starts where a run of address characters starts: from every position inside a long run of them,
    # "0-0-0-...", the search was quadratic, minutes for a 1 MiB request body)
    ("email", re.compile(r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b"), "[EMAIL]"),
    ("routing_number", re.compile(r"(?i)(\brouting(?: number| no\.?| #)?\D{0,12})(\d{9})\b"), None),
    ("account_number", re.compile(r"(?i)(\b(?:account|acct)(?: number| no\.?| #)?\D{0,12})(\d[\d-]{5,19}\d)\b"), None),
    # a date given as someone's date of birth (a date alone is not personal: "the deadline is 4/15/2026"; nor
    # is a rule's cut-off: "born on January 1, 1960 or later")
    ("date_of_birth", re.compile(r"(?i)(\b(?:date of birth|birth ?date|birthday|d\.?o\.?b\.?|born(?: on)?)"
                                 r"(?:\s*\([^)\n]{0,20}\))?\W{0,6}(?:is\W{1,3})?)"
                                 r"(\d{4}-\d{1,2}-\d{1,2}|\d{1,2}[/.-]\d{1,2}[/.-]\d{2,4}|"
                                 r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2}(?:st|nd|rd|th)?,?"
                                 r"\s+\d{4}|\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|"
                                 r"oct|nov|dec)[a-z]*\.?,?\s+\d{4})\b"
                                 r"(?!,?\s+(?:or|and)\s+(?:later|earlier|before|after|older|younger)\b|"
                                 r"\s+through\b)"), None),
    # other countries' numbers, before the North American pattern can take a piece of one: international
    # ("+44 20 7946 0958", "+44 (0)20 ...", "0049 30 12345678") or with a trunk 0 ("0412 555 019", "07700 900123",
    # "(020) 7946 0958", "030 12345678", "0412555019"); 9 to 15 digits (a date has 8 at most), a longer run read
    # as numbers one after another (`dialled`). Not a group of a larger figure ("1 000 000 000", "DE89 3704 0044").
    ("phone", re.compile(r"(?<![\w$€£.,+-])(?<!\d[ \u00a0])"
                         r"(?:(?:\+|00)[1-9]\d{0,2}[ .-]?(?:\(0\)[ .-]?)?\(?\d{1,4}\)?|\(0\d{1,4}\)|0\d{1,4})"
                         r"(?:[ .-]?\d{2,8}){1,5}(?![\w.,-]?\d)"), "dialled"),
    ("phone", re.compile(r"(?<!\d)(?:\+?1[ .-]?)?\(?\d{3}\)?[ .-]\d{3}[ .-]\d{4}(?!\d)"), "[PHONE]"),
    ("card_or_account", re.compile(r"(?<![\d$.,])\d{12,19}(?!\d|[.,]\d)"), "[NUMBER]"),
    # a card number as printed, in groups ("4111 1111 1111 1111", "3782 822463 10005"): masked when it reads
    # as a card (first digit 2-6, the networks' ranges; its check digit holds, Luhn), so a run of years
    # ("2017 2018 2019 2020") or codes ("1000 2000 3000 4000") is not taken for one
    # (13 to 19 digits: "4222 2222 2222 2", "3782 8224 6310 005", "4111 1111 1111 1111 123"; no-break spaces)
    ("card_or_account", re.compile(r"(?<![\d$.,-])(?:[2-6]\d{3}[ \u00a0-]\d{4}[ \u00a0-]\d{4}[ \u00a0-]\d{1,4}"
                                    r"(?:[ \u00a0-]\d{1,3})?|[2-6]\d{3}[ \u00a0-]\d{6}[ \u00a0-]\d{4,5})"
                                    r"(?!\d|[.,-]\d)"), "luhn"),
]
MASK_TOKEN = re.compile(r"\[(SSN|EMAIL|PHONE|NUMBER|ROUTING_NUMBER|ACCOUNT_NUMBER|DATE_OF_BIRTH)\]")
NUMBER_TOKEN = re.compile(r"\[(?:NUMBER|ROUTING_NUMBER|ACCOUNT_NUMBER)\]")  # a masked card, account or routing number


# Contact points an organisation publishes, not a person's: a toll-free number (North American 8XX, UK 0800/0808,
# AU/IE 1800/1300/1850), a function mailbox ("claims@", "support@") at a domain that is no mail provider's (a
# list of the large ones: an unlisted provider's address still passes), a bank's routing number (it names a
# bank, not an account). Shown where the text is the knowledge base's own and not a worked example's (an
# answer's claims, a citation's snippet: "call Roadside on 1-888-555-0143" is the answer; a customer's details
# in an example are not); masked where the text is the caller's, whose routing number sits beside an account.
_NANP_TOLL_FREE = re.compile(r"1?8(?:00|33|44|55|66|77|88)\d{7}")  # 1-800-..., (888) ...: digits only
_OTHER_FREEPHONE = re.compile(r"(?:080[08]\d{6,7}|(?:1800|1300|1850)\d{6})")  # UK 0800/0808, AU/IE 1800/1300/1850
_FUNCTION_MAILBOXES = frozenset(words("""
    support help helpdesk servicedesk service services customerservice customerservices customercare care contact
    contactus info information enquiries enquiry inquiries inquiry claims claim billing accounts payments
    disputes fraud security privacy compliance legal hr benefits payroll leave admin office sales team hello
    feedback complaints appeals noreply donotreply press media orders bookings reservations returns refunds
    cancel cancellations members membership memberservices tenants lettings repairs maintenance webmaster
    postmaster abuse marketing careers jobs admissions registrar financialaid finaid studentaid accessibility
    reception"""))
_MAIL_PROVIDERS = frozenset(words("""
    gmail googlemail yahoo ymail hotmail outlook live msn icloud me mac aol proton protonmail pm gmx mail yandex
    zoho fastmail hey comcast verizon att sbcglobal btinternet sky virginmedia bigpond optusnet eircom rocketmail
    qq 163 126 naver daum hanmail orange free laposte sfr wanadoo t-online web freenet libero virgilio tiscali
    shaw rogers sympatico ntlworld talktalk email usa inbox rediffmail tutanota tuta mailbox posteo seznam"""))


def published(kind: str, found: str) -> bool:
    """Whether a number or address found in knowledge-base text is an organisation's published contact."""
    if kind == "routing_number":
        return True
    if kind == "phone":  # by its digits: "1850-555-0143" is Florida's 850, not Ireland's 1850 (10 digits)
        digits = "".join(ch for ch in found if ch.isdigit())
        return bool(_NANP_TOLL_FREE.fullmatch(digits) or _OTHER_FREEPHONE.fullmatch(digits))
    if kind == "email":
        local, _, domain = found.partition("@")
        return (re.sub(r"[._-]", "", local.lower()) in _FUNCTION_MAILBOXES
                and domain.lower().split(".")[0] not in _MAIL_PROVIDERS)
    return False


def mask_pii(text: str, public: bool = False) -> tuple[str, list[str]]:
    """Mask personal data; returns the masked text and the kinds that were found. `public`: the text is the
    knowledge base's own, whose published contact points stay (`published`)."""
    kinds: list[str] = []
    for kind, pattern, replacement in _PII:
        def sub(m: re.Match[str], kind: str = kind, replacement: str | None = replacement) -> str:
            if replacement == "luhn":
                return card_masked(m.group(), kinds)
            if replacement == "dialled":
                return dialled(m.group(), kinds, public)
            if public and published(kind, m.group() if replacement is not None else m.group(2)):
                return m.group()
            kinds.append(kind)
            if replacement is None:  # keep the label ("account number: "), mask the digits
                return m.group(1) + "[" + kind.upper() + "]"
            return replacement

        text = pattern.sub(sub, text)
    return text, kinds


_GROUP = re.compile(r"[ .-]?[^ .-]+")


def dialled(found: str, kinds: list[str], public: bool = False) -> str:
    """A run of digit groups read as phone numbers one after another ("020 7946 0958 020 7946 0959"): a leading
    stretch of 9 to 15 digits is one number (up to where a group opens another with a trunk 0 or a "+", else the
    longest), masked unless published, and the rest is read again; a stretch too short for a number stays (a
    date, a version, a sort code)."""
    groups = _GROUP.findall(found)
    out, i = [], 0
    while i < len(groups):
        digits, end = 0, None
        for j in range(i, len(groups)):
            digits += sum(ch.isdigit() for ch in groups[j])
            if digits > 15:
                break
            if digits >= 9 and (j > i or digits >= 10):  # one group of 9 digits is a routing number, an id
                end = j + 1
                if digits >= 10 and j + 1 < len(groups) and groups[j + 1].lstrip(" .-")[:1] in ("0", "+"):
                    break  # a whole number, and the next group opens another with its trunk 0 or its "+"
        if end is None:
            out.append(groups[i])
            i += 1
            continue
        lead = groups[i][0] if groups[i][:1] in (" ", ".", "-") else ""
        number = "".join(groups[i:end])[len(lead):]
        if public and published("phone", number):
            out.append(lead + number)
        else:
            kinds.append("phone")
            out.append(lead + "[PHONE]")
        i = end
    return "".join(out)


def card_masked(found: str, kinds: list[str]) -> str:
    """A grouped card number masked when it reads as one: its check digit holds, and its first groups are no
    run of years ("2020 2021 2022 10 claims"). The pattern may have taken the next figure as a last group
    ("4111 ... 1111 12/27", "... 1111 123", "... 1111 3 times"): then the card is the groups before it. (A
    reading of four groups and a count can be masked so too: masking too much is the safer error.)"""
    groups = re.split(r"([ \u00a0-])", found)
    for end in (len(groups), len(groups) - 2):
        number = "".join(groups[:end])
        digits = sum(ch.isdigit() for ch in number)
        years = all(re.fullmatch(r"(?:19|20)\d\d", g) for g in groups[:5:2])
        if end > 0 and digits >= 13 and luhn(number) and not years:
            kinds.append("card_or_account")
            return "[NUMBER]" + "".join(groups[end:])
    return found


def luhn(number: str) -> bool:
    """The check digit of a payment card number holds."""
    digits = [int(d) for d in number if d.isdigit()][::-1]
    total = sum(d if i % 2 == 0 else (d * 2 - 9 if d > 4 else d * 2) for i, d in enumerate(digits))
    return total % 10 == 0


def masked(text: str, public: bool = False) -> str:
    return mask_pii(text, public)[0]


# A bare run of 7 to 11 digits, or an SSN written with dots ("123.45.6789"): too short for a card, no SSN
# without its dashes or its label, so the patterns above keep it (a figure is not personal data). Said back as
# a value that was refused, it is more likely an SSN, phone or account number typed in the wrong field than a
# figure: no date, amount or yes/no has one.
_BARE_RUN = re.compile(r"(?<![\d.,])\d{7,11}(?!\d|[.,]\d)|(?<![\d.])\d{3}\.\d{2}\.\d{4}(?![\d.])")


def refused_value_masked(text: str) -> str:
    """A reason that quotes a refused value, masked as an answer is, and without a bare long digit run."""
    return _BARE_RUN.sub("[NUMBER]", masked(text))


SENSITIVE_PLACEHOLDER = "[provided]"  # a sensitive field's value after validation: given, never echoed


def mask_scalar(value: object) -> object:
    """A text or a whole number with personal data masked. A number is data too: 4111111111111111 given as
    JSON is still a card number, so a number the patterns mask becomes its masked text."""
    if isinstance(value, str):
        return masked(value)
    if isinstance(value, int) and not isinstance(value, bool):
        text = str(value)
        out = masked(text)
        return value if out == text else out
    return value


def mask_values(values: dict[str, object]) -> dict[str, object]:
    """Collected data with personal data masked in its values (text and whole numbers; booleans pass)."""
    return {k: mask_scalar(v) for k, v in values.items()}
