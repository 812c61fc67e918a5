"""Does the answer state what the question asks? Words that name the question's type are not its subject."""

from __future__ import annotations

from pathlib import Path

from citewise.engine.answerability import (
    accepted_types,
    assess,
    focus_terms,
    offered_things,
    question_type,
    question_years,
)
from citewise.engine.outcomes import subject_words
from citewise.kb.text import terms
from tests.paths import ROOT, ingested_kb


def test_the_words_of_a_question_type_are_not_its_focus() -> None:
    assert question_type("How much does the plan charge to set up a loan?") == "amount"
    assert "charg" not in focus_terms("How much does the plan charge to set up a loan?", set(), "amount")
    assert focus_terms("How long does a rollover take?", set(), "duration") == ["rollov"]
    assert "much" not in subject_words("How much does the plan charge?")  # never echoed as "not covered"
    # "expect" only asks, and a particle alone names nothing ("get my deposit back": the topic is the facet)
    deposit = "When should I expect my Wrenfield security deposit back?"
    assert focus_terms(deposit, {"wrenfield", "secur", "deposit"}, "date") == []
    assert "back" in focus_terms("When can I pay the loan back?", set(), "date")  # not alone: kept
    assert "most" not in focus_terms("What's the most the plan will pay for a dental cleaning?", set(), "amount")
    assert "quickly" not in subject_words("How quickly does the plan pay a hardship withdrawal?")  # only asks
    assert "fast" in subject_words("Is there a fast track lane?")  # ("how fast" asks, but "fast" can be a subject)


def test_at_what_point_names_no_thing_to_state() -> None:
    """"At what point does a downgrade take effect?" asks when or on what condition, not for a thing named
    "point" (a blind SaaS KB's right answer, "on the next billing date", went `uncertain` as not stating "the
    point"); "how many points", "what stage is my claim at" still name what the answer must state (review)."""
    from citewise.engine.answerability import assess, named_asks

    asked = "At what point does a downgrade become effective on monthly billing?"
    assert named_asks(asked, set()) == []
    said = ["On monthly billing the downgrade takes effect on the next billing date."]
    assert assess(asked, said, said[0], set()).missing == []
    step = ["Upload your ID after you submit the application form."]
    assert assess("At what point in the process do I upload my ID?", step, step[0], set()).missing == []
    assert named_asks("How many points do I need for Gold status?", set()) == [("points", "point")]
    assert named_asks("What stage is my claim at?", set()) == [("stage", "stage")]


def test_a_day_of_the_month_answers_when() -> None:
    from citewise.engine.answerability import sentence_types

    for sentence in ("The grace period ends at 11:59 p.m. on the 5th.", "Rent is due on the 1st of each month.",
                     "Pay by the 15th to avoid a late fee.", "Rent is due on the 1st business day of the month.",
                     "Pay by the 15th unless agreed."):
        assert "date" in sentence_types(sentence), sentence
    for sentence in ("She was the 5th caller today.", "The inspection is done on the 5th floor.",
                     "It failed on the 3rd attempt.", "Answer by the 2nd ring."):
        assert "date" not in sentence_types(sentence), sentence
    assert assess("When does the rent grace period end?", ["The grace period ends at 11:59 p.m. on the 5th."],
                  "", set()).ok


def test_an_amount_question_is_answered_by_an_amount_about_its_subject() -> None:
    question = "How much does the plan charge to set up a loan?"
    topic = {"loan"}  # a facet: it selected the article, so it does not count as the answer's subject
    assert assess(question, ["Loan setup fee: $100."], "", topic).ok  # "set up" / "setup", charge / fee
    missing = assess(question, ["Loans are repaid by payroll deduction."], "", set()).missing
    assert missing and missing[0].startswith("the amount")  # no amount: still not answered
    assert not assess("How much is the wire transfer charge?", ["Loan setup fee: $100."], "", set()).ok


def test_a_price_question_is_not_answered_by_a_count() -> None:
    """"Does it charge a fee to switch to both-to-sign?" is answered by money or "free", not by the one
    business day the switch takes; a count still answers an amount that is not a price."""
    fee = "Does the bank charge a fee to switch a joint account to both to sign?"
    assert not assess(fee, ["The switch to both to sign applies within 1 business day."], "", set()).ok
    assert assess(fee, ["Switching a joint account to both to sign is free."], "", set()).ok
    assert assess(fee, ["Switching a joint account to both to sign costs $10."], "", set()).ok
    assert assess("What is the maximum number of loans I can have open?", ["You can have 2 loans open."],
                  "", set()).ok
    assert not assess("How much does it cost to buy out the lease in year 6?",
                      ["The lessee may buy out the system from the start of lease year 5."], "", set()).ok
    # (review) a count that is a price, or money in another currency, still answers
    assert assess("What is the maximum number of ATM withdrawals before a fee applies?",
                  ["You can make up to 4 ATM withdrawals a month before fees apply."], "", set()).ok
    assert assess("How much does a lounge pass cost?", ["A lounge pass costs 25,000 points."], "", set()).ok
    assert assess("How much does the tourist visa cost?", ["The tourist visa costs ₹2,500."], "", set()).ok
    assert assess("How much does the airport transfer cost?", ["The airport transfer is 120 SEK."], "", set()).ok
    # (second review) a sentence that names the fee but gives no price for it does not answer
    assert not assess("How much is the late fee?", ["A late fee applies 15 days after the due date."], "", set()).ok
    # a question that also asks a count keeps the count for that part
    both = "How many bags can I check, and what is the charge for a heavy bag?"
    assert "count" in accepted_types(both, question_type(both))


def test_a_thing_asked_for_by_name_is_answered_only_when_the_answer_names_it() -> None:
    """"What exchange-rate margin does the bank add?" is not answered by the wire fee, however close the
    topic: the answer never says "margin"."""
    question = "What exchange-rate margin does the bank add when I send a wire in foreign currency?"
    missing = assess(question, ["An outgoing international wire costs $45."], "", set()).missing
    assert "the exchange-rate margin" in missing
    assert assess(question, ["The bank adds a margin of 2% to the exchange rate."], "", set()).ok
    # the name's type words are read by the type check; the required data is answered by fields
    assert assess("What notice period applies to a tenant ending the lease?",
                  ["A tenant must give a notice period of one full month."], "", set()).ok
    assert assess("How many paid days off can I take for bereavement?",
                  ["Employees receive 3 paid bereavement days."], "", set()).ok
    assert assess("What information do I need to open a claim?", ["Open the claim in the app."], "", set()).ok
    assert assess("What range can I set the backup reserve to?", ["Set it anywhere from 10% to 100%."], "", set()).ok
    # "which" picks one of a kind, and the answer names the one: "httpx[socks]", not "extra"
    assert assess("Which httpx extra do I need for SOCKS proxy support?",
                  ["`socksio` - SOCKS proxy support (with `httpx[socks]`)."], "", set()).ok
    # (review) a plural after "what" is answered by a list of its kind; a name ending in a type noun by a
    # figure; a name opening with a function word is no name; a compound meets its closed spelling
    for question, claim in (("What payment methods do you accept?", "We accept Visa, Mastercard and PayPal."),
                            ("How many business days does a transfer take?", "Transfers arrive within 3 days."),
                            ("What annual fee does the card have?", "The card costs $95 a year."),
                            ("What if my card is stolen?", "Freeze it in the app at once."),
                            ("What exactly is covered?", "Accidents and illnesses are covered."),
                            ("What licence is the package released under?", "It is released under the MIT license."),
                            ("What roll-over option is best for me?", "Rollovers to an IRA keep the tax deferral."),
                            ("How many days after move-in do I have to add to the condition report?",
                             "Tenants may add items to the report within 7 days.")):
        assert assess(question, [claim], "", set()).ok, question


def test_whether_a_provider_offers_a_thing_is_answered_only_when_the_answer_names_the_thing() -> None:
    """"Does Contoso install solar water heaters?" answered with Contoso's warranty rules does not say whether:
    the answer must name the thing asked about. The asker's own doing ("can I pay for a flight with ...")
    is no offer, the provider's name is no part of the thing, and money is named by an amount."""
    water = "Does Contoso Solar install solar water heating systems?"
    missing = assess(water, ["Contoso Solar warranties cover panels and inverters for 25 years."], "",
                     set(terms("Contoso Solar"))).missing
    assert missing == ["anything about solar water heating systems"]
    assert assess(water, ["Contoso Solar does not install solar water heating systems."], "",
                  set(terms("Contoso Solar"))).ok
    # a verb that is a word of the provider's name ("Fabrikam Pet Cover") is not the offer; the next one is
    liability = "Does Fabrikam Pet Cover include liability insurance if my dog bites a neighbour?"
    facets = set(terms("Fabrikam Pet Cover"))
    assert "anything about liability insurance" in assess(liability, ["Accidents are covered after 5 days."], "",
                                                           facets).missing
    assert assess(liability, ["Third-party liability insurance is not included."], "", facets).ok
    # the second ask of a question in two parts; the thing's name ends before "if", "while"...
    assert assess("What is the yearly limit, and does it pay for cremation if my pet dies?",
                  ["The limit is $5,000 a year."], "", set()).missing == ["anything about cremation"]
    assert assess("Will they give us a loaner phone while the claim is processed?",
                  ["Claims are processed in 5 days."], "", set()).missing == ["anything about loaner phone"]
    # "charge" asks whether the provider charges the thing: interest is not named by a fee ("Does Brackenmoor
    # charge interest on an overdue balance?", a blind gyms KB's dev half); a fee is named by an amount
    assert assess("Does Contoso charge interest on an overdue balance?", ["A $15 late fee applies after 10 days."],
                  "", set(terms("Contoso"))).missing == ["anything about interest"]
    assert assess("Does Contoso charge a fee for wire transfers?", ["Wire transfers cost $25 each."], "",
                  set(terms("Contoso"))).ok
    # (second review) only before a price: "charge my card", "charge a lot", "charge fast" ask no such thing
    for question, claim in (("Does Contoso charge my card on the 1st?", "Payments are collected on the 1st."),
                            ("Does Contoso charge a lot for shipping?", "Shipping is $4.99."),
                            ("Does it charge fast?", "The battery charges to 80% in 30 minutes."),
                            ("Does Contoso charge a late fee?", "A £15 penalty applies after 10 days.")):
        assert assess(question, [claim], "", set(terms("Contoso"))).ok, question
    # "pay" asks whether a kind of payment is paid ("Does Tailwind pay interest if my claim payment arrives
    # late?", blind dev halves of three sets): the claim-payment rules do not name interest
    late = "Does Contoso pay interest if my claim payment arrives late?"
    assert assess(late, ["Claims are paid within 10 business days of approval."], "",
                  set(terms("Contoso"))).missing == ["anything about interest"]
    assert assess(late, ["No interest is paid on late claim payments."], "", set(terms("Contoso"))).ok
    assert assess("Will they pay me interest or compensation for the wait?", ["Compensation is $50."], "",
                  set()).missing == ["anything about interest"]
    # not a payee ("pay the vet") nor a payment of one's own ("pay it off"), nor a customer's ("Do students pay
    # interest?"); the kind of payment alone is the thing ("monthly" is no part of it), named as an answer
    # pays it ("we reimburse", "4.1% AER": the first review)
    for question, claim in (("Will Contoso pay the vet directly?", "Claims are paid within 10 business days."),
                            ("Can I pay it off early?", "Claims are paid within 10 business days."),
                            ("Do students pay interest while studying?", "The loan APR is 6.5%."),
                            ("Does Contoso pay interest monthly?", "Interest is paid annually."),
                            ("Will Contoso pay compensation if my flight is late?", "We reimburse up to £50."),
                            ("Does the Contoso saver pay interest?", "The account pays 4.1% AER."),
                            ("Does Contoso pay compensation for delays, and how do I get a refund?",
                             "Delays over 3 hours are compensated with €250.")):
        assert assess(question, [claim], "", set(terms("Contoso"))).ok, question
    # (reviews) the thing after its receiver, after a name of its part, without a particle or a period after
    # it, up to a dash; each of a list; after ", or" and a dash. A request to "you", information asked for,
    # a condition ("if Fabrikam covers the claim") and the passive (the asker's own case: "is my dog's
    # surgery covered?") are not read
    for question, things in (("Does Woodgrove give students a discount?", ["discount"]),
                             ("Will the plan cover the cost of a replacement phone?", ["replacement phone"]),
                             ("Does Fabrikam offer coverage for IVF?", ["IVF"]),
                             ("Does Contoso offer 24/7 support?", ["24/7 support"]),
                             ("Will Contoso give out free toasters?", ["toasters"]),
                             ("Does the plan cover both dental and vision?", ["dental", "vision"]),
                             ("Does Fabrikam cover MRI scans, blood tests and acupuncture?",
                              ["MRI scans", "blood tests", "acupuncture"]),
                             ("Does Fabrikam cover acupuncture, and what is the excess?", ["acupuncture"]),
                             ("Does Contoso offer 2 free acupuncture sessions a year?",
                              ["2 acupuncture sessions"]),
                             ("Does Woodgrove give access to a gym?", ["gym"]),
                             ("Does Woodgrove offer 2 free days of volunteering leave?", ["volunteering leave"]),
                             ("Does Contoso give a 15% discount to seniors?", ["15% discount"]),
                             ("Does it charge a fee, or does it offer free transfers?", ["fee", "transfers"]),
                             ("Fabrikam - do they cover acupuncture?", ["acupuncture"]),
                             ("Does it include supply chain insurance?", ["supply chain insurance"]),
                             ("Does Tailspin provide a phone with the plan?", ["phone"]),
                             ("Does Tailspin offer roaming — including calls in the EU?", ["roaming"]),
                             ("Does Tailspin offer roaming - including calls in the EU?", ["roaming"]),
                             ("Does Woodgrove provide staff with a laptop?", ["laptop"]),
                             ("Does Woodgrove provide a laptop with the job?", ["laptop"]),
                             ("Does the Northwind CLI install dependencies automatically?", ["dependencies"]),
                             ("Does Fabrikam cover my dog's physiotherapy?", ["physiotherapy"]),
                             ("Does Contoso give [NUMBER] cardholders cashback?", ["cardholders cashback"]),
                             ("Does Contoso offer roaming outside the EU?", ["roaming"])):

        found = [name for name, _ in offered_things(question, set(terms("Contoso Fabrikam Woodgrove")))]
        assert found == things, question
    # a capitalised word of a provider's name is no verb ("Contoso Home Cover"); a topic's "cover" still is
    assert [n for n, _ in offered_things("Does Contoso Home Cover include flood insurance?",
                                         set(terms("Contoso Home Cover")))] == ["flood insurance"]
    assert [n for n, _ in offered_things("Does the plan cover dental insurance?",
                                         set(terms("accident cover")))] == ["dental insurance"]
    for question in ("Could you provide a summary of the Contoso Bank fees?", "Can you give me an overview of fees?",
                     "Does the guide include the steps?", "Can I pay for a flight with Bitcoin?",
                     "Is my dog's physical therapy covered?", "How much is the excess if Fabrikam covers the claim?",
                     "What happens if the bank covers the loss?", "Is everything included in the membership?"):
        assert offered_things(question, set()) == [], question
    for question, claim in (("Can I pay for a Contoso flight with Bitcoin?", "Pay by card at booking."),  # asker
                            ("Does Contoso give me a discount if I add a second pet?", "A 10% discount applies."),
                            ("Can Contoso give me more grant money because of it?", "The grant can rise to $4,000."),
                            ("How do I install the package with conda?", "Run conda install pkg."),  # how, not whether
                            ("Does the plan cover behavioral therapy?", "Behavioural therapy is covered.")):
        assert assess(question, [claim], "", set(terms("Contoso"))).ok, question


def test_a_thing_is_named_in_either_spelling_joined_or_hyphenated_and_free_is_answered_by_a_price() -> None:
    """(review) British and American spellings, a hyphenated word written closed, "free" (a price answers it)
    and a last word that counts the thing out ("sessions") do not make a stated thing unstated."""
    for question, claim in (("Does Fabrikam cover pre-existing conditions?", "Preexisting conditions are not covered."),
                            ("Does Fabrikam cover anesthesia?", "Anaesthesia and hospitalisation are covered."),
                            ("Does Fabrikam cover hospitalization?", "Anaesthesia and hospitalisation are covered."),
                            ("Does Contoso offer free ATM withdrawals abroad?", "ATM withdrawals abroad cost $3."),
                            # a last word that counts the thing out ("sessions", "visits") need not be named
                            ("Would Fabrikam cover hydrotherapy sessions?", "Hydrotherapy is covered up to $1,000."),
                            ("Does Contoso pay for physio visits?", "Physio is covered up to 10 times a year.")):
        assert assess(question, [claim], "", set(terms("Fabrikam Contoso"))).ok, question
    # (review) one spelling rule for both checks: plurals too; it never merges two words ("poet" / "pet")
    for question, claim, named in (("What license does the bank require?", "The bank requires licences.", True),
                                   ("Does Contoso cover licences?", "Contoso covers licenses up to $50.", True),
                                   ("What catalog does Contoso publish?", "Contoso publishes catalogues.", True),
                                   ("What poet does Contoso sponsor?", "Contoso sponsors a pet.", False),
                                   ("What prize does Contoso award?", "Contoso awards a prise.", False),
                                   ("What tour does Contoso run?", "Contoso runs a tor.", False)):
        assert assess(question, [claim], "", set(terms("Contoso"))).ok is named, question
    # (review) a plan, a fee, an expense carries the meaning
    for question, claim in (("Does Contoso offer a family plan?", "Contoso offers 12 weeks of family leave."),
                            ("Does it include a monthly fee?", "You receive monthly statements."),
                            ("Does Contoso pay for travel expenses?", "Travel insurance is sold separately."),
                            ("Does Contoso install water heating systems?", "Contoso installs water pumps.")):
        assert not assess(question, [claim], "", set(terms("Contoso"))).ok, question


def test_a_thing_is_named_by_a_synonym_the_kb_lists_and_in_one_claim() -> None:
    """(review) "Does Woodgrove offer SSO?" answered "single sign-on" (a synonym the KB lists) names the thing;
    "a credit card" is not named by "a line of credit" and "card transactions" in two claims."""
    synonym = assess("Does Woodgrove offer SSO?", ["Woodgrove offers single sign-on on every plan."], "",
                     set(terms("Woodgrove")), alternatives={"sso": ["single sign-on"]})
    assert synonym.ok, synonym.missing
    split = assess("Does Contoso offer a credit card?", ["Contoso offers a line of credit.",
                                                        "Card transactions post the same day."], "", set())
    assert split.missing == ["anything about credit card"]
    assert assess("Does Contoso offer a credit card?", ["Contoso's credit card has no annual fee."], "", set()).ok


def test_through_the_engine_a_thing_never_stated_is_uncertain_and_one_stated_answered(tmp_path) -> None:
    """Through the graph and the LangGraph-free pipeline alike: a thing the KB states is answered, one it never
    states ("acupuncture") is `uncertain`, saying so."""
    from citewise import api
    from citewise.config import Context
    from citewise.engine.pipeline import answer

    home = northwind_home(tmp_path, {"vet.md": "---\nid: northwind-vet\ntitle: Northwind pet cover\ntopic: pets\n---\n"
                                     "## Business rules\n- Anaesthesia and hospitalisation are covered.\n"
                                     "- Physical therapy is covered up to $1,000 a year.\n"})
    for run in (lambda q: api.ask(q, home=home, confidence_threshold=0.0),
                lambda q: answer(q, ctx=Context(home=str(home), confidence_threshold=0.0))):
        stated = run("Will Northwind pay for physical therapy after a hospitalisation?")
        assert stated["decision"] in ("can_proceed", "needs_data"), stated["response"]["text"]
        never = run("Will Northwind pay for acupuncture after a hospitalisation?")
        text = never["response"]["text"]
        assert never["decision"] == "uncertain" and "anything about acupuncture" in text, text


def test_a_duration_question_is_answered_by_a_duration() -> None:
    sent = ["Rollovers are sent within 3 business days."]
    assert assess("How long does a rollover take?", sent, "", {"rollov"}).ok  # "take" asks how long, nothing more
    assert not assess("How long does a rollover take?", ["Rollovers need a signed form."], "", set()).ok


def test_a_when_question_is_answered_by_a_clock_time_or_the_days_of_the_week() -> None:
    """"When are the phone lines open?" is answered by opening hours, not only by a calendar date."""
    question = "When are Tailwind's phone lines open?"
    assert assess(question, ["Our phone lines are open 8 a.m. to 8 p.m. Central time."], "", set()).ok
    assert assess(question, ["The phone lines are open Monday through Saturday."], "", set()).ok
    assert not assess(question, ["Phone lines are staffed by licensed agents."], "", set()).ok
    # only opening-hours questions: a clock time or a weekday answers no other "when" (review)
    assert not assess("What year was the company founded?", ["The company closes at 5 p.m."], "", set()).ok
    assert not assess("When do I have to file my claim?", ["Claims are reviewed on weekdays."], "", set()).ok
    assert not assess("When do I have to close my account?", ["Closures are processed on weekdays."], "", set()).ok
    assert not assess("When will the refund be available?", ["Refunds post Monday through Friday."], "", set()).ok
    assert assess("When does the support desk close?", ["The desk closes at 6 p.m."], "", set()).ok
    assert not assess("When will you close my account?", ["Accounts close on weekdays."], "", set()).ok
    assert assess("When are you open?", ["We are open 9 a.m. to 5 p.m."], "", set()).ok
    # a 24-hour time is a clock time, and "what time" asks for one whatever it is about (an FAQ page's hours)
    hours = ["Customer service is open from 08:00 to 20:00, and from 09:00 to 17:00 at weekends."]
    assert assess("When is customer service open?", hours, "", set()).ok
    assert assess("What time is customer service open on Saturdays?", hours, "", set()).ok
    assert assess("What time is the cut-off for next-day delivery?", ["Orders placed by 14:30 ship the same day."],
                  "", set()).ok
    assert not assess("What time is the cut-off for next-day delivery?", ["Next-day orders are packed at our hub."],
                      "", set()).ok
    assert not assess("When is the cut-off?", ["The call was logged at 00:01:23."], "", set()).ok  # a time stamp
    # (the review) a day of the week is no time of day, and a figure with a colon is a time only where it reads
    # as one
    assert not assess("What time does the courier deliver?", ["Couriers deliver Monday to Saturday."], "", set()).ok
    assert assess("What time does the courier deliver?", ["Couriers deliver from 07:00 to 21:00."], "", set()).ok
    assert not assess("When are the phone lines open?", ["Phone lines have a hold time of 4:30 at peak."], "",
                      set()).ok
    assert not assess("What time period does the warranty cover?", ["The desk is staffed on Saturdays."], "",
                      set()).ok


def test_a_noun_is_answered_by_its_verb() -> None:
    """"How long to make a decision" is answered by "decided within 15 business days": the stemmer keeps
    decision (decis) and decided (decid) apart, and "make", "once", "all" are not the subject."""
    question = "Once they have all of my paperwork, how long do they take to make a decision?"
    assert assess(question, ["A complete claim is decided within 15 business days."], "", set()).ok
    assert not assess(question, ["Claims are paid within 15 business days."], "", set()).ok
    assert assess("When is the extension due?", ["You may extend it by March 1."], "", set()).ok
    # only -sion nouns and their verbs pair (review: "intensive" is not "intend", "clause" not "Claude")
    assert not assess("How long does the intensive care benefit last?", ["We intend to reply within 5 days."], "",
                      set()).ok
    assert not assess("When is the pension paid out?", ["Pending claims are reviewed within 10 business days."], "",
                      set()).ok
    assert assess("How long until they decide?", ["Decisions are made within 15 business days."], "", set()).ok
    # partners are matched as words with their inflections, not as prefixes (third review)
    assert not assess("How long does a division take?", ["Dividends are paid within 3 days."], "", set()).ok
    assert not assess("How long does a provision last?", ["Contact your provider within 30 days."], "", set()).ok


def test_a_contraction_is_never_a_subject_the_knowledge_base_lacks() -> None:
    """"I don't recognise a charge" is about a charge: "dont" is neither a search term nor echoed back as
    something the knowledge base says nothing about."""
    question = "There's something on my bill I don't recognise. What's that charge?"
    assert subject_words(question) == ["bill", "recognise", "charge"]
    # nor are the light verbs and pronouns of everyday speech: what is missing is said in the subject's words
    assert subject_words("Got stung with an extra charge buying stuff in Bali. What's that about?") == [
        "stung", "extra", "charge", "buying", "stuff", "bali"]
    assert subject_words("My Tidewell phone won't work when I put in my friend's card from another company") == [
        "tidewell", "phone", "work", "friends", "card", "company"]
    # ... read as written, not by stem, and not the words that make subjects ("down payment", "back pain")
    for question, subject in (("Is there an exception to the late fee?", "exception"),
                              ("Is a down payment needed?", "down"), ("Evening appointments?", "evening"),
                              ("Who is the lettings agent?", "lettings"), ("Is back pain covered?", "back")):
        assert subject in subject_words(question), question
    assert {"dont", "there", "what"}.isdisjoint(focus_terms(question, set(), "other"))
    assert "ill" in subject_words("My dog is ill.") and "id" in terms("Bring your photo id.")  # words too
    # "she's" is a pronoun and a verb, never a subject (a probe read "says nothing about: wife, shes")
    assert subject_words("Can my wife pay with her card? She's not on the rental.") == [
        "wife", "pay", "card", "rental"]
    # "cannot" is "can't" written out: the same question either way (a probe: "because I cannot travel" sent an
    # answered question to `uncertain`, "because I can't travel" did not)
    assert terms("Can I rename it because I cannot travel?") == terms("Can I rename it because I can't travel?")


def test_the_unit_a_time_question_asks_in_is_not_its_subject() -> None:
    """"How many *days*" asks for a duration: any duration in days would otherwise match its own unit."""
    assert "day" not in focus_terms("How many days does the plan take to approve a loan?", set(), "duration")
    question = "How many days does the plan take to approve a loan?"
    assert not assess(question, ["Checks are mailed within 5 business days."], "", {"loan"}).ok
    assert assess(question, ["Loans are approved within 2 business days."], "", {"loan"}).ok
    assert "year" not in focus_terms("What year is my first RMD due?", set(), "date")


def provider_articles(tmp_path: Path, topic: str, title: str, rules: dict[str, list[str]]) -> Path:
    """A KB folder with one article per provider on `topic` ("<title> <provider>", its business rules)."""
    src = tmp_path / "kb"
    src.mkdir()
    for name, lines in rules.items():
        key = name.split()[0].lower()
        (src / f"{key}.md").write_text(
            f"---\nid: {key}-{topic}\ntitle: {title} {name}\nrecord_keeper: {name}\ntopic: {topic}\n---\n"
            "## Business rules\n" + "".join(f"- {line}\n" for line in lines))
    return src


def test_a_provider_name_alone_does_not_make_a_question_covered(tmp_path) -> None:
    """"Can I get a mortgage from Northwind Harbour Mutual?" finds Northwind's loan article by the name alone
    (relevance over the threshold): without the name nothing in the KB is about a mortgage, so it is out of
    scope, not an uncertain answer from the loan article. A question the article covers still answers."""
    from citewise import api
    from citewise.engine.pipeline import search_passages
    from citewise.engine.search import topic_relevance
    from citewise.kb.ingest import ingest

    src = provider_articles(tmp_path, "loan", "Savings plan loans at", {
        "Northwind Harbour Mutual": ["Loan setup fee: $75, taken from the loan amount.",
                                     "Loans are repaid by payroll deduction over 1 to 5 years.",
                                     # a name's word once in lower case is still the name's (second review)
                                     "The term can be changed by mutual agreement."],
        "Fabrikam Trust": ["Loan setup fee: $50.", "Loans are repaid over 1 to 4 years."],
        # a name with a word of the subject, which its own articles write in lower case
        "Cedar Hollow Water": ["Water bills are sent every quarter to each water account.",
                               "A water loan for a new meter runs 2 years."]})
    cedar = src / "cedar.md"  # a provider given as a list (the KB format allows one)
    cedar.write_text(cedar.read_text().replace("keeper: Cedar Hollow Water", "keeper: [Cedar Hollow Water]"))
    ingest([src], tmp_path / "home", progress=False)
    home = tmp_path / "home"
    mortgage = api.ask("Can I get a mortgage from Northwind Harbour Mutual?", home=home)
    assert mortgage["decision"] == "out_of_scope", mortgage["decision"]
    found = search_passages("Can I get a mortgage from Northwind Harbour Mutual?", home=home)["relevance"]
    assert found["score"] >= 0.5 > 0.15 > found["topic"]  # relevant by the name alone
    assert mortgage["confidence"] == found["topic"]  # and said with the confidence of the rest
    covered = api.ask("How many years can a Northwind Harbour Mutual loan run?", home=home, confidence_threshold=0.0)
    assert covered["decision"] != "out_of_scope" and "5 years" in covered["response"]["text"]
    water = api.ask("How often does Cedar Hollow Water bill me?", home=home, confidence_threshold=0.0)
    assert water["decision"] != "out_of_scope" and "every quarter" in water["response"]["text"], water["decision"]
    # no provider named, or only in lower case: nothing is taken out of the question
    from citewise.config import Context
    from citewise.engine.pipeline import open_snapshot
    kb = open_snapshot(Context(home=home))
    named = {"record_keeper": ["Northwind Harbour Mutual"]}
    assert topic_relevance(kb, "Can I get a mortgage?", kb.search("mortgage"), {}, {}) is None
    assert topic_relevance(kb, "Tell me about Northwind Harbour Mutual", kb.search("Northwind"), {}, named) is None
    assert topic_relevance(kb, "What does Northwind Harbour Mutual offer?", kb.search("Northwind"), {}, named) is None
    # a question written all in lower case has no capitals to tell a name by: the name's words come out
    # wherever they stand (they had stayed in, cleared the floor, and the mortgage question was answered)
    lower = "can i get a mortgage from northwind harbour mutual"
    lowered = search_passages(lower, home=home)["relevance"]
    assert lowered.get("topic") is not None and lowered["topic"] < 0.15 <= lowered["score"], lowered
    assert api.ask(lower, home=home)["decision"] == "out_of_scope"
    # ... and so is one whose only capitals open the sentence (the review: it was still answered)
    assert api.ask("Can i get a mortgage from northwind harbour mutual?", home=home)["decision"] == "out_of_scope"
    assert api.ask("Can i get a UK mortgage from northwind harbour mutual?", home=home)["decision"] == "out_of_scope"
    # ... while a capitalised question keeps a name's word written in lower case ("mutual agreement")
    agreed = "Can Northwind Harbour Mutual change my loan term by mutual agreement?"
    assert topic_relevance(kb, agreed, kb.search(agreed), {}, named) is None
    # a rest whose own words are found needs no embedding: it clears the floor by them alone
    assert topic_relevance(kb, "Are Northwind Harbour Mutual loans repaid by payroll deduction?",
                           kb.search("loans repaid by payroll deduction"), {}, named) is None


def northwind_home(tmp_path: Path, extra: dict[str, str] | None = None, fields: bool = False) -> Path:
    """A one-article KB (a loan article with a fee and a term; with `fields`, a record keeper and a required
    field too), plus `extra` files."""
    from citewise.kb.ingest import ingest

    src = tmp_path / "kb"
    src.mkdir()
    (src / "loan.md").write_text(
        "---\nid: northwind-loan\ntitle: Northwind savings plan loans\n"
        + ("record_keeper: Northwind\n" if fields else "") + "topic: loan\n---\n"
        "## Business rules\n- Loan setup fee: $75, taken from the loan amount.\n"
        "- Loans are repaid by payroll deduction over 1 to 5 years.\n- One loan may be outstanding at a time.\n"
        + ("## Required data\n- Vested balance (currency, required, plan): The vested balance. Why: caps the loan.\n"
           if fields else "") +
        "## Steps\n1. Sign in to the Northwind portal and open Loans.\n2. Choose the amount and the term.\n")
    for name, text in (extra or {}).items():
        (src / name).write_text(text)
    ingest([src], tmp_path / "home", progress=False)
    return tmp_path / "home"


def test_through_the_engine_an_unstated_detail_is_uncertain_and_a_stated_one_answered(tmp_path) -> None:
    """A question on a covered topic whose asked-for detail the article never states is not answered as if
    it were (`uncertain`, saying what is missing); the same wording about a stated detail is answered."""
    from citewise import api

    home = northwind_home(tmp_path)

    def ask(question: str) -> dict:
        # Confidence routing off: under test is whether the answer states what is asked. (On a one-article
        # KB every term's IDF is degenerate and confidence reads low: under the 0.63 threshold for the stated fee.)
        return api.ask(question, home=home, confidence_threshold=0.0)

    stated = ask("How much does Northwind charge to set up a savings plan loan?")
    assert stated["decision"] in ("can_proceed", "needs_data") and "$75" in stated["response"]["text"]
    unstated = ask("What percentage interest rate does a Northwind savings plan loan charge?")
    assert unstated["decision"] == "uncertain", unstated["decision"]
    assert "percentage" in unstated["response"]["text"]
    year = ask("What will the Northwind savings plan loan setup fee be in 2031?")
    assert year["decision"] == "uncertain" and "2031" in year["response"]["text"]
    # a date the question gives (when something happens) is not a year the KB must state anything for
    dated = ask("I start a new job on 14 September 2031. How much does Northwind charge to set up a savings plan "
                "loan?")
    assert dated["decision"] in ("can_proceed", "needs_data"), dated["response"]["text"]
    # ... but a date in the asking sentence is the year asked about: the fee on 1 January 2031 is not today's
    dated_fee = ask("What will the Northwind savings plan loan setup fee be on 1 January 2031?")
    assert dated_fee["decision"] == "uncertain" and "2031" in dated_fee["response"]["text"]
    assert question_years("Our baby is due on 14 September 2026. How much leave can I take?") == set()
    assert question_years("I turned 50 in 2024. What is the limit?") == set()
    assert question_years("What is the fee in January 2031, or as of 1/1/2032?") == {"2031", "2032"}
    # a calendar day in a question asking whether/how/who is when something happens, not a period asked about
    assert question_years("Can they pay the clinic directly for my surgery on May 12, 2026?") == set()
    assert question_years("How do I file a claim for the 2026-05-12 visit?") == set()
    assert question_years("Can I take a hardship withdrawal in 2031?") == {"2031"}  # a year: the period asked
    # ... and a day a yes/no question asks a figure for is the figure's date (review of 89c6c0a)
    assert question_years("Is the loan setup fee still $75 on January 1, 2031?") == {"2031"}
    assert question_years("Can I pay the loan origination fee by check on March 3, 2027?") == set()  # paying it
    dated_yes_no = ask("Can I take a Northwind savings plan loan on 14 September 2031?")
    assert dated_yes_no["decision"] in ("can_proceed", "needs_data"), dated_yes_no["response"]["text"]


def test_a_money_word_is_the_subject_when_nothing_else_is_left() -> None:
    """"How much does Acme charge for vesting" (Acme and vesting select the article): only a fee, charge,
    cost or rate answers it, not a vesting percentage; "what rate does Acme charge" is answered by a rate."""
    vesting = {"acm", "vest"}
    question = "How much does Acme charge for vesting?"
    assert not assess(question, ["Vesting is 20% after 2 years."], "", vesting).ok
    assert assess(question, ["A vesting review fee of $25 applies."], "", vesting).ok
    loan, rate = {"acm", "loan"}, "What rate does Acme charge on a loan?"
    assert assess(rate, ["The loan interest rate is prime + 2%."], "", loan).ok
    assert not assess(rate, ["Loans are capped at 50% of the vested balance."], "", loan).ok


def test_a_figure_for_another_year_does_not_answer() -> None:
    """"the 2026 limit" answered with the 2025 one is a false answer; a sentence whose only number is
    the asked year gives no figure; a question without a year takes the figure the KB states."""
    claims = ["The elective deferral limit is $23,500 for 2025.", "Starting in 2026, catch-up must be Roth."]
    question = "What is the 2026 elective deferral limit?"
    assert question_type(question) == "amount"
    assert assess(question, claims, "", set()).missing == ["the amount for elective deferral limit in 2026"]
    assert assess("What is the 2025 elective deferral limit?", claims, "", set()).ok
    assert assess("What is the elective deferral limit?", claims, "", set()).ok
    assert question_type("What does the carrier charge for an eSIM swap?") == "amount"
    # the rule counts only a claim with a figure besides its year, and reads ranges ...
    assert not assess(question, [*claims, "Starting in 2026, 401(k) catch-up must be Roth."], "", set()).ok
    assert assess("What is the 2025 deferral limit?", ["The limit of $23,000 applies for plan years 2024-2026."],
                  "", set()).ok
    # ... and only the asking sentence's year, for figures (a date question's answer names its own year)
    assert assess("I turned 50 in 2024. What is the catch-up limit?", ["The catch-up limit is $7,500 for 2025."],
                  "", set()).ok
    assert assess("When is the deadline for 2025 IRA contributions?",
                  ["The IRA contribution deadline is April 15, 2026."], "", set()).ok
    # an amount, a birth year or an age's year is not the year a figure is asked for
    limit = ["For 2026, the contribution limit is $24,500."]
    assert assess("I turned 50 in 2024, how much can I contribute?", limit, "", set()).ok
    assert assess("How much tax is withheld on a $2000 withdrawal?", ["20% is withheld for 2026."], "", set()).ok


def test_a_question_about_a_process_or_policy_is_not_an_amount_question() -> None:
    for q in ("What do you charge for a replacement card?", "What does roaming cost in Canada?",
              "If I opt out of the smart meter, is there a charge?", "Is there a fee to port a number out?",
              "Does it cost anything to switch plans?", "Will they charge me anything for a paper bill?",
              "What am I being charged?", "What will I be charged for a late payment?",
              "At Copperfield, what's the overdraft fee?", "What\u2019s the fee for a wire?",
              "What do I get charged if I go over my limit?", "What does a cashier's check cost at the bank?",
              "What would a transfer cost with the app?"):
        assert question_type(q) == "amount", q
    # ... but not a person in charge, a cost of living, a cost to one's credit (the review of that change)
    for q in ("Is there a person in charge of repairs?", "Is there a cost-of-living adjustment?",
              "What does the charge at the top of my bill mean?", "What does the cost from the utility include?",
              "Are there any costs to my credit score if I pay late?", "Are there any charges pending against me?"):
        assert question_type(q) != "amount", q
    # "is there a fee" is answered by a fee named between "no" and "fee" too, not by "no fee waiver"
    from citewise.engine.answerability import sentence_types
    assert "amount" in sentence_types("Larkspan charges no port-out fee.")
    assert "amount" in sentence_types("There is no early termination fee.")
    assert "amount" in sentence_types("There is no fee for a sublet.")
    for sentence in ("There is no waiting period.", "No late fee waiver is granted.",
                     "There is no formal fee schedule.", "Pay without a charge card."):
        assert "amount" not in sentence_types(sentence), sentence
    # amounts in any currency, and a price under its label ("Price (EUR): 58")
    for sentence in ("Long-haul: £95.", "Bicycle: €58 per flight.", "Pet rent is CAD 25 a month.", "Price (EUR): 58"):
        assert "amount" in sentence_types(sentence), sentence
    assert "amount" in sentence_types("Price (EUR): 8")
    for sentence in ("Fee: 2 business days", "Fee: 25 business days", "The cost: 1 of 3 options"):
        assert "amount" not in sentence_types(sentence), sentence
    for q in ("Is there a fee to the landlord for subletting?", "Is there a charge of any kind for paper bills?",
              "Is there an in-app fee?"):
        assert question_type(q) == "amount", q
    for q in ("What do I do if I see an unrecognized charge?", "What is the process for a fee refund?",
              "What is the policy on late fees?", "What does 'charge-off' mean?",
              "What is the time limit for a rollover?", "What does the cost basis include?",
              "What was I charged for?"):
        assert question_type(q) != "amount", q


def test_a_plain_document_that_leads_the_search_answers_alone(tmp_path) -> None:
    """In a KB that mixes articles and plain documents, a question the search answers from a plain guide
    is not handed to the nearest article (whose fields and critical chunks would crowd the guide out)."""
    from citewise import api

    northwind_home(tmp_path, {"portal-guide.md": (
        "# Using the Northwind portal app\n\n## How often balances refresh\n\n"
        "The portal app refreshes account balances every 4 hours from the recordkeeping system.\n\n"
        "## Signing in\n\nThe portal app signs you in with a one-time code sent by text message.\n\n"
        "## Notifications\n\nThe portal app sends a notification when a balance refresh fails.\n")}, fields=True)
    guide = api.ask("How often does the portal app refresh my balances?", home=tmp_path / "home")
    assert guide["decision"] == "can_proceed" and guide["article_reference"] is None
    from citewise.config import Context
    from citewise.engine.access import UNRESTRICTED
    from citewise.engine.inquiry import understand
    from citewise.engine.pipeline import open_snapshot
    from citewise.engine.resolve import resolve

    ctx = Context(home=str(tmp_path / "home"))
    kb = open_snapshot(ctx)
    led = resolve(kb, ctx, understand(kb, ctx, {"question": "How often does the portal app refresh my balances?"},
                                      UNRESTRICTED))
    assert led.article_id is None and led.lead_document == "portal-guide.md"  # its chunks lead the context
    assert "every 4 hours" in guide["response"]["text"]
    assert {c["chunk_id"].split("#")[0] for c in guide["citations"]} == {"portal-guide.md"}
    # naming the record keeper and the topic (facets the guide, without front matter, does not carry) still
    # reaches it, though the loan article is relevant enough that the facets are not relaxed
    named = api.ask("How does the Northwind loan portal sign me in?", home=tmp_path / "home")
    assert "one-time code" in named["response"]["text"], named["response"]["text"]
    # ... and so does a question whose record keeper was given as collected data
    given = api.ask("How does the loan portal sign me in?", home=tmp_path / "home",
                    collected_data={"record_keeper": "Northwind"})
    assert "one-time code" in given["response"]["text"], given["response"]["text"]
    loan = api.ask("What is the Northwind loan setup fee?", home=tmp_path / "home")
    assert loan["article_reference"]["article_id"] == "northwind-loan" and "$75" in loan["response"]["text"]


def test_a_sentence_in_the_question_s_own_terms_matches_exactly() -> None:
    """"How many hours" is answered by a number of hours, "how long do I have to" by a limit on the asker
    (due, deadline), not by how long the office takes."""
    from citewise.engine.answerability import exact_match

    assert exact_match("How many hours of leave do I get?", "A full-time employee has 480 hours.")
    assert exact_match("How many business days does it take?", "It takes 3 business days.")
    assert not exact_match("How many hours of leave do I get?", "Report each absence within 2 business days.")
    deadline = "How long do I have to turn in my documents?"
    assert exact_match(deadline, "Documents are due within 30 calendar days of the request.")
    assert not exact_match(deadline, "The office processes documents within 10 business days.")
    assert exact_match("When is my appeal due?", "Her appeal is due by June 23, 2026.")
    assert not exact_match("How long does processing take?", "Documents are due within 30 days.")
    # "due to" is a cause, "how long do I get" asks for an entitlement, and a scene-setting "due" asks nothing
    assert not exact_match("How long is leave due to a serious illness?", "A certificate is due within 15 days.")
    assert not exact_match("How long do I get for bereavement leave?", "Requests must be submitted within 7 days.")
    assert not exact_match("Our baby is due on 14 September. How long is the leave?", "Forms are due within 30 days.")


def test_the_answer_leads_with_the_limit_a_deadline_question_asks_for() -> None:
    """Both sentences are durations about the documents; the asker's limit answers "how long do I have"."""
    from citewise.engine.extractive import ExtractiveGenerator
    from citewise.engine.generate import AnswerRequest
    from citewise.engine.records import ContextChunk

    text = ("The office processes submitted documents within 10 business days after all documents are "
            "received.\n\nDocuments are due within 30 calendar days of the request.")
    chunks = [ContextChunk("C1", "v#0", "v", "Verification", "business_rules", "high", text)]
    draft = ExtractiveGenerator().generate(AnswerRequest("How long do I have to submit my documents?", "", chunks,
                                                         "v", {}))
    assert draft.sections[0].answer_components[0].startswith("Documents are due within 30 calendar days")


def test_a_how_to_question_is_answered_by_the_command_not_the_description() -> None:
    """"How do I kill a test that hangs?" was answered from documentation with what the plugin is ("it
    terminates hanging tests") and not the command that does it: the sentence showing the code is the
    answer's form, as a figure is a how-much question's."""
    from citewise.engine.extractive import ExtractiveGenerator
    from citewise.engine.generate import AnswerRequest
    from citewise.engine.records import ContextChunk

    text = ("Often the only sure way to interrupt a hanging test is by terminating the entire process.\n\n"
            "This plugin will time each test and terminate it when it takes too long.\n\n"
            "Now you can run the suite with a timeout in seconds, and any test that takes longer is stopped:\n"
            "```\npytest --timeout=300\n```")
    chunks = [ContextChunk("C1", "t#0", "t.md", "pytest-timeout", "content", "high", text)]
    draft = ExtractiveGenerator().generate(AnswerRequest("How do I kill a test that hangs for too long?", "", chunks,
                                                         "t.md", {}))
    assert "--timeout=300" in draft.sections[0].answer_components[0]
    # (the review) a sample of data or a label in backticks is no command: the how-to sentence still leads
    from citewise.engine.extractive import shows_code

    assert shows_code("Run ``tqdm.write()``") and shows_code("Install with `pip install httpx`")
    assert not shows_code("A daily export looks like this:\n```csv\ndate,production_kwh\n2026-01-01,12.4\n```")
    assert not shows_code("Open the `Security` tab")
    assert shows_code("Run `ruff check .`") and shows_code("Set `export TQDM_MININTERVAL=5`")
    assert not any(shows_code(f"`{label}`") for label in ("Go to Settings", "Make a payment", "Python 3.11", "401(k)",
                                                        "Set up a plan", "Import data", "Roth IRA = pre-tax"))
    assert shows_code("`make test`") and shows_code("`go build ./...`")


def test_an_eligibility_condition_is_given_with_the_others_of_its_list() -> None:
    """"I'm 58 and on SSDI. Can I get the discount?" matched the age-or-SSDI condition; the income limit the
    applicant must also meet was left out. An eligibility list's conditions all hold at once: quoting one
    quotes them all (a short list; a long one is not a checklist of conditions)."""
    from citewise.engine.extractive import MAX_CONDITIONS, ExtractiveGenerator
    from citewise.engine.generate import AnswerRequest
    from citewise.engine.records import ContextChunk

    eligibility = ("- The account holder is 65 or older, or receives disability benefits (SSDI).\n"
                   "- Total household income is under $41,500 a year.\n"
                   "- The water account is in the applicant's own name.")
    rules = "- The discount is 30% off the base charge.\n- Only one discount per household."
    chunks = [ContextChunk("C1", "d#1", "d", "Discount", "eligibility", "high", eligibility),
              ContextChunk("C2", "d#2", "d", "Discount", "business_rules", "critical", rules)]
    draft = ExtractiveGenerator().generate(AnswerRequest("I'm 58 and on SSDI. Can I get the discount?", "", chunks,
                                                         "d", {}))
    said = " ".join(draft.sections[0].answer_components)
    assert "SSDI" in said and "$41,500" in said and "own name" in said
    # a long list is not given whole
    items = ["Applicants on SSDI qualify at any age.", "The home must be the main residence all year.",
             "Income stays below the county median.", "Meters are read monthly by city staff.",
             "No unpaid balance older than ninety days remains.", "Each household holds one account only.",
             "Landlords cannot apply for their tenants.", "Paper forms reach the office by post."]
    long_list = "\n".join(f"- {item}" for item in items[:MAX_CONDITIONS + 1])
    chunks[0] = ContextChunk("C1", "d#1", "d", "Discount", "eligibility", "high", long_list)
    draft = ExtractiveGenerator().generate(AnswerRequest("Can I get the discount on SSDI?", "", chunks, "d", {}))
    assert sum(c.split(" [")[0] in items for c in draft.sections[0].answer_components) < MAX_CONDITIONS + 1
    # not a condition an Always-rule gives as a warning already, not a list the budget cut, one list per document
    from dataclasses import replace

    chunks[0] = ContextChunk("C1", "d#1", "d", "Discount", "eligibility", "high", eligibility)
    rules_of = {"d": {"always": ["Always: state that the account must be in the applicant's own name."]}}
    draft = ExtractiveGenerator().generate(AnswerRequest("I'm 58 and on SSDI. Can I get the discount?", "", chunks,
                                                         "d", rules_of))
    assert not any("own name" in c for c in draft.sections[0].answer_components)
    cut = [replace(chunks[0], text=eligibility.rsplit(" own name", 1)[0], truncated=True), chunks[1]]
    draft = ExtractiveGenerator().generate(AnswerRequest("I'm 58 and on SSDI. Can I get the discount?", "", cut,
                                                         "d", {}))
    assert not any("account is in the applicant" in c for c in draft.sections[0].answer_components)
    second = ContextChunk("C3", "d#3", "d", "Discount", "eligibility", "high",
                          "- Renters on SSDI apply through the landlord.\n- The landlord signs form B.\n"
                          "- The lease runs a year or more.")
    draft = ExtractiveGenerator().generate(AnswerRequest("I'm 58 and on SSDI. Can I get the discount?", "",
                                                         [*chunks, second], "d", {}))
    said = " ".join(draft.sections[0].answer_components)
    assert "$41,500" in said and not ("form B" in said and "a year or more" in said)


def test_where_no_article_governs_the_lead_document_answers_and_no_quoted_article_s_rules_are_said() -> None:
    """A plain document that leads the search holds the question as a governing article would: another
    document's sentence must be clearly better (SOURCE_MARGIN) to take the answer from it. An article quoted
    with none governing does not bring its Always-rules to the draft: it may be a neighbour of the inquiry
    (the check settles on it, and says its rules, only when the article ranking clearly leads with it)."""
    from citewise.engine.extractive import SOURCE_MARGIN, ExtractiveGenerator
    from citewise.engine.generate import AnswerRequest
    from citewise.engine.records import ContextChunk

    guide = ContextChunk("C1", "guide.md#0", "guide.md", "Portal guide", "content", "high",
                         "The portal app refreshes account balances every 4 hours.", score=0.5)
    article = ContextChunk("C2", "loan#0", "loan", "Loans", "business_rules", "high",
                           "The portal app refreshes loan balances every 4 hours.", score=1.0)
    guard = ContextChunk("C3", "loan#1", "loan", "Loans", "guardrails", "high",
                         "- Always: mention that balances can lag payroll by one day.", score=0.0)
    rules = {"loan": {"always": ["mention that balances can lag payroll by one day"]}}
    question = "How often does the portal app refresh balances?"

    def answer(lead: str | None) -> tuple[set[str], list[str]]:
        draft = ExtractiveGenerator().generate(AnswerRequest(question, "", [guide, article, guard], None, rules,
                                                             lead_document=lead))
        cited = {label for s in draft.sections for item in s.answer_components for label in ("C1", "C2")
                 if f"[{label}]" in item}
        return cited, [w for s in draft.sections for w in s.warnings]

    # the article's sentence scores above the guide's (its retrieval prior: 0.15 x 1.0 against 0.15 x 0.5), by
    # less than SOURCE_MARGIN
    assert SOURCE_MARGIN > 0.075
    cited, warnings = answer("guide.md")
    assert cited == {"C1"} and warnings == [], (cited, warnings)
    cited, warnings = answer(None)  # nothing leads: the best sentence's document answers, without its rules
    assert cited == {"C2"} and warnings == [], (cited, warnings)
    governed = ExtractiveGenerator().generate(AnswerRequest(question, "", [guide, article, guard], "loan", rules))
    assert any("lag payroll by one day" in w for s in governed.sections for w in s.warnings)  # (when it governs)


def test_an_answer_from_one_article_where_a_plain_page_led_asks_for_that_article_s_data(tmp_path) -> None:
    """A help-centre page leads the search for "can my 6-year-old fly alone?", so no article governs; the
    answer still comes from the unaccompanied-minor article alone (its rules are far the better sentences).
    Those rules bind the answer: the article's Always-rule is a warning, its data are asked for
    (`needs_data`), and the article is referenced, through the graph and the engine alike."""
    from citewise import api
    from citewise.config import Context
    from citewise.engine.access import UNRESTRICTED
    from citewise.engine.inquiry import understand
    from citewise.engine.pipeline import answer, open_snapshot
    from citewise.engine.resolve import resolve
    from citewise.kb.ingest import ingest

    ingest([ROOT / "examples" / "kb-travel"], tmp_path / "home", progress=False)
    question = "Can my 6-year-old fly alone on Aurelis Air?"
    ctx = Context(home=str(tmp_path / "home"))
    kb = open_snapshot(ctx)
    led = resolve(kb, ctx, understand(kb, ctx, {"question": question}, UNRESTRICTED))
    assert led.article_id is None and led.lead_document is not None  # the premise: a plain page leads
    fields = [f["key"] for f in kb.docs["aurelis-unaccompanied-minors"].fields if f.get("required")]
    for out in (api.ask(question, home=tmp_path / "home", confidence_threshold=0.0),
                answer(question, home=tmp_path / "home", ctx=Context(confidence_threshold=0.0))):
        assert {c["doc_id"] for c in out["citations"]} == {"aurelis-unaccompanied-minors"}, out["citations"]
        assert out["decision"] == "needs_data" and out["missing_fields"] == fields, out["missing_fields"]
        assert out["article_reference"]["article_id"] == "aurelis-unaccompanied-minors"
        warnings = [w for s in out["response"]["sections"] for w in s["warnings"]]
        assert any("stay at the gate" in w for w in warnings), warnings
    # given the article's data, the same answer can proceed; a provider the KB does not know is said
    given = dict.fromkeys(fields, "x") | {"child_date_of_birth": "2020-03-01"}
    done = api.ask(question, home=tmp_path / "home", confidence_threshold=0.0, collected_data=given)
    assert done["decision"] == "can_proceed" and done["missing_fields"] == [], (done["missing_fields"],
                                                                               done["invalid_fields"])
    bogus = api.ask(question, home=tmp_path / "home", confidence_threshold=0.0,
                    collected_data={"record_keeper": "Bogus Air"})
    assert "record_keeper" in bogus["invalid_fields"], bogus["invalid_fields"]
    # ... and where a plain page answers alone (nothing settles), too
    seats = api.ask("How much is standard seat selection on Bramblewing?", home=tmp_path / "home",
                    confidence_threshold=0.0, collected_data={"record_keeper": "Bogus Air"})
    assert seats["article_reference"] is None and "record_keeper" in seats["invalid_fields"], seats["invalid_fields"]


def test_an_answer_settles_on_its_article_only_where_the_article_ranking_clearly_leads_with_it(tmp_path) -> None:
    """An answer from an article the ranking barely prefers may be a neighbour's ("can I add my kitten to
    my policy?" answered from a wellness add-on): asking for its data would be asking in vain (review)."""
    from citewise.config import Context
    from citewise.engine.pipeline import open_snapshot
    from citewise.engine.records import ArticleCandidate, Inquiry, Relevance, Resolution
    from citewise.engine.resolve import SETTLE_MARGIN, answering_article

    kb = open_snapshot(Context(home=str(northwind_home(tmp_path, fields=True))))

    def led(runner_up: float | None, lead: str | None = "guide.md", cited: set[str] | None = None):
        ranked = [ArticleCandidate("northwind-loan", "Loans", 1.0)]
        ranked += [ArticleCandidate("other", "Other", runner_up)] if runner_up is not None else []
        resolution = Resolution(covered=False, relevance=Relevance(0.8, 0.6, 0.7, 1.0), candidates=ranked,
                                lead_document=lead)
        return answering_article(kb, resolution, {"northwind-loan"} if cited is None else cited, Inquiry(""))

    settled = led(None)
    assert settled is not None and settled.article_id == "northwind-loan" and settled.missing == ["vested_balance"]
    assert led(SETTLE_MARGIN - 0.05) is not None
    assert led(SETTLE_MARGIN + 0.05) is None  # the ranking barely prefers it
    assert led(None, lead=None) is None  # no plain document led: nothing to settle
    assert led(None, cited={"northwind-loan", "guide.md"}) is None  # not one article's answer


def test_which_data_to_collect_comes_from_an_article_even_when_a_guide_leads_the_search(tmp_path) -> None:
    """A how-to guide about the same task can take the search's first hits; the fields to collect are
    still the article's (a plain guide has none), so required_data is not reported out of scope."""
    from citewise import api

    guide = ("# Using the Northwind portal app for loans\n\n## Opening the loan screen\n\nIn the Northwind portal "
             "app, open the loan screen from the menu to start a savings plan loan.\n\n## What the loan screen "
             "shows\n\nThe loan screen shows the information you give for the loan and its status.\n\n"
             "## Notifications\n\nThe portal app notifies you when the loan is paid out.\n")
    home = northwind_home(tmp_path, {"loan-app-guide.md": guide}, fields=True)
    question = "What information do I need to give to take a Northwind savings plan loan in the portal app?"
    from citewise.config import Context
    from citewise.engine.access import UNRESTRICTED
    from citewise.engine.inquiry import understand
    from citewise.engine.pipeline import open_snapshot
    from citewise.engine.resolve import plain_far_ahead
    from citewise.engine.search import search

    ctx = Context(home=str(home))
    kb = open_snapshot(ctx)
    hits = search(kb, ctx, understand(kb, ctx, {"question": question}, UNRESTRICTED), k=20).hits
    assert plain_far_ahead(hits, {d for d, info in kb.docs.items() if info.structured})  # the premise: an answer
    out = api.required_data(question, home=home)                                         # would come from the guide
    assert out["article_reference"]["article_id"] == "northwind-loan"
    assert [f["key"] for f in out["required_fields"]["plan_data"] + out["required_fields"]["participant_data"]] == [
        "vested_balance"]


def test_which_data_to_collect_is_not_an_unrelated_articles_when_a_guide_is_far_ahead(tmp_path) -> None:
    """Resetting a password is in a guide only; the loan article, far behind it, does not govern that
    inquiry's data (review: it had returned the loan's vested balance)."""
    from citewise import api

    guide = "# Resetting your password in the Northwind portal app\n\n" + "\n\n".join(
        f"## Password step {i}\n\nIn the Northwind portal app, step {i} of resetting your password asks for "
        f"the information on screen {i}." for i in range(1, 6))
    home = northwind_home(tmp_path, {"password-guide.md": guide}, fields=True)
    out = api.required_data("What information do I need to give to reset my password in the Northwind portal app?",
                            home=home)
    assert out["article_reference"] is None and out["missing_fields"] == [], out


def test_one_plain_chunk_far_ahead_of_every_article_leads_too() -> None:
    """A call transcript states the phone hours in one window: that window far outranks any article, so no
    article governs, though the transcript holds only one of the top hits; near-tied, the article governs."""
    from types import SimpleNamespace as Hit

    from citewise.engine.resolve import PLAIN_GAP, plain_document_leads

    articles = {"waiting-periods", "claims"}
    far = [Hit(doc_id="call.vtt", score=1.10), Hit(doc_id="claims", score=0.41),
           Hit(doc_id="waiting-periods", score=0.28)]
    assert PLAIN_GAP * 1.10 > 0.41 and plain_document_leads(far, articles)
    # a lead of a quarter is enough (a memo's window at 1.09 over the shut-off article's 0.71 in the dev set)
    assert plain_document_leads([Hit(doc_id="call.vtt", score=1.09), Hit(doc_id="claims", score=0.71)], articles)
    near = [Hit(doc_id="call.vtt", score=1.10), Hit(doc_id="claims", score=1.0), Hit(doc_id="claims", score=0.3)]
    assert not plain_document_leads(near, articles)
    assert not plain_document_leads([Hit(doc_id="claims", score=1.1), Hit(doc_id="call.vtt", score=0.2)], articles)
    negative = [Hit(doc_id="call.vtt", score=-0.1), Hit(doc_id="claims", score=-0.5)]  # a reranker's logits
    assert not plain_document_leads(negative, articles)
    assert not plain_document_leads(far, articles, by_score=False)  # scores not on the heuristic's scale


def test_a_question_about_a_bound_is_answered_by_the_sentence_stating_it() -> None:
    """"Is there a ceiling on how much..." shares no word with "The maximum adjustment is $1,250.00": the
    bound is the answer's form, so that sentence leads (it had not even been a candidate)."""
    from citewise.engine.answerability import exact_match
    from citewise.engine.extractive import ExtractiveGenerator
    from citewise.engine.generate import AnswerRequest
    from citewise.engine.records import ContextChunk

    question = "Is there a ceiling on how much Cedar Hollow will credit me for one leak?"
    assert exact_match(question, "The maximum adjustment is $1,250.00 per application.")
    assert exact_match("What is the least I can pay?", "Payments must be at least $25.")
    assert exact_match("What's the most I can borrow?", "You can borrow up to $50,000.")
    # "most participants", "the most common" ask for no bound (second review: any "up to" sentence led)
    assert not exact_match("How much do most participants pay in loan fees?", "You can borrow up to $30,000.")
    assert not exact_match("What is the most common fee?", "The maximum fee is $75.")
    assert not exact_match(question, "The sewer portion is credited at 100% of the excess usage.")
    text = ("- One leak adjustment per account every 24 months.\n- The sewer portion is credited at 100% of the "
            "excess usage when the leaked water did not enter the sewer.\n- The maximum adjustment is $1,250.00 "
            "per application.")
    chunks = [ContextChunk("C1", "leak#0", "leak", "Leak adjustments", "business_rules", "critical", text)]
    draft = ExtractiveGenerator().generate(AnswerRequest(question, "", chunks, "leak", {}))
    assert draft.sections[0].answer_components[0].startswith("The maximum adjustment is $1,250.00")


def test_an_acronym_the_context_defines_counts_as_its_long_form() -> None:
    """"The STD benefit is 60% ..." answers a question about the short-term disability benefit: the article
    defines "short-term disability (STD)" elsewhere, and the sentence that writes only the acronym led no more
    than the topical ones around it (it ranked tenth of twenty in an HR article)."""
    from citewise.engine.extractive import ExtractiveGenerator
    from citewise.engine.generate import AnswerRequest
    from citewise.engine.records import ContextChunk
    from citewise.kb.text import acronym_definitions, with_long_forms

    defined = acronym_definitions(["Employees may file a short-term disability (STD) claim. The attending physician "
                                   "statement (APS) is due in 15 days. Free Application for Federal Student Aid "
                                   "(FAFSA). Filed by the employee (APS). Call the office (USA). Office of "
                                   "Management and Budget (OMB). Log in the Portal (IP)."])
    # (a small word may be skipped, never start the long form: not "of Management and Budget", "in the Portal")
    assert defined == {"STD": "short term disability", "APS": "attending physician statement",
                       "FAFSA": "Free Application for Federal Student Aid", "OMB": "Office of Management and Budget"}
    assert with_long_forms("The STD benefit", defined) == "The STD benefit short term disability"
    assert with_long_forms("The STDX code", defined) == "The STDX code"
    guide = ("- Employees who cannot work because of a non-work-related illness may file a short-term disability "
             "(STD) claim.\n- A long-term disability claim is referred to the carrier by week 20.")
    rules = ("- Short-term disability eligibility starts after 90 days of employment for every full-time "
             "employee.\n- The STD benefit is 60% of weekly base earnings, up to $1,500 per week.")
    chunks = [ContextChunk("C1", "std#0", "std", "Disability claims", "decision_guide", "critical", guide),
              ContextChunk("C2", "std#1", "std", "Disability claims", "business_rules", "critical", rules)]
    draft = ExtractiveGenerator().generate(AnswerRequest("What is my weekly short-term disability benefit?", "",
                                                         chunks, "std", {}))
    assert draft.sections[0].answer_components[0].startswith("The STD benefit is 60%"), draft.sections[0]


def test_the_score_gap_is_read_only_on_the_heuristic_rerankers_scale(tmp_path, monkeypatch) -> None:
    """RRF's 1/(60+rank) or a cross-encoder's logits make a ratio of scores meaningless: with another
    reranker resolve never asks whether a plain document is far ahead."""
    from citewise.config import Context
    from citewise.engine import resolve as resolve_module
    from citewise.engine.access import UNRESTRICTED
    from citewise.engine.inquiry import understand
    from citewise.engine.pipeline import open_snapshot

    home = northwind_home(tmp_path)
    asked: list[bool] = []
    real = resolve_module.plain_far_ahead
    monkeypatch.setattr(resolve_module, "plain_far_ahead", lambda *a, **k: asked.append(True) or real(*a, **k))
    for reranker, expected in (("none", []), ("heuristic", [True])):
        asked.clear()
        ctx = Context(home=str(home), reranker=reranker)
        kb = open_snapshot(ctx)
        resolve_module.resolve(kb, ctx, understand(kb, ctx, {"question": "What is the loan setup fee?"}, UNRESTRICTED))
        assert asked == expected, reranker


def test_a_table_row_is_an_answer_of_its_own() -> None:
    """A pipe table (an HTML page's, a Word memo's, an article's Fees table) is read row by row: "Hail 1 inch
    or larger" and what to do about it are one answer; the whole table in one unit was none."""
    from citewise.kb.text import split_items

    table = ("Storm guidance:\n\n| Event | What to do |\n| --- | --- |\n"
             "| Hail 1 inch or larger | Request a post-storm inspection. |\n"
             "| Wind above 70 mph | Check the panels |\n\n"
             "| Service | Basic | Premier |\n|:--|--:|---|\n| Dental cleaning | Not covered | $200 |\n")
    assert split_items(table) == [
        "Storm guidance:", "Hail 1 inch or larger: Request a post-storm inspection.",
        "Wind above 70 mph: Check the panels.", "Dental cleaning: Basic: Not covered; Premier: $200."]
    short = "| Service | Basic | Premier |\n|---|---|---|\n| Dental | Not covered |\n"
    assert split_items(short) == ["Dental: Basic: Not covered."]  # a short row keeps its columns' headers
    # A terse two-column row says nothing alone ("Long-haul: £95."), too short to quote: its value's
    # header says what the figure is, for every row of that table alike (the review: a longer row without
    # it lost to a terse one with it); a table whose rows say it keeps two cells, as does a numeric header.
    terse = "| Route | Fee per pet, per direction |\n|---|---|\n| Long haul flight | £95 |\n| Short-haul | £60 |\n"
    assert split_items(terse) == ["Long haul flight: Fee per pet, per direction: £95.",
                                  "Short-haul: Fee per pet, per direction: £60."]
    assert split_items("| Fee | Amount |\n|---|---|\n| Late payment fee | $25 |\n") == ["Late payment fee: $25."]
    assert split_items("| Cabin | 2026 |\n|---|---|\n| Economy | £20 |\n") == ["Economy: £20."]


def test_a_table_row_answers_through_the_engine(tmp_path) -> None:
    from citewise import api

    home = northwind_home(tmp_path, {"storms.html": (
        "<html><head><title>Storm FAQ</title></head><body><h1>Storm FAQ</h1><h2>Hail and wind</h2>"
        "<table><tr><th>Event</th><th>What to do</th></tr>"
        "<tr><td>Hail 1 inch or larger</td><td>Request a post-storm inspection of the panels.</td></tr>"
        "<tr><td>Wind gusts above 70 mph</td><td>Check from the ground for lifted panels.</td></tr></table>"
        "<h2>Power cuts</h2><p>Batteries keep the fridge running for 12 hours in a power cut.</p></body></html>")})
    out = api.ask("What size of hail means I should request a post-storm inspection?", home=home,
                  confidence_threshold=0.0)
    assert out["guardrails"]["passed"], out["guardrails"]
    assert out["response"]["text"].startswith("Hail 1 inch or larger: Request a post-storm inspection"), out


def test_a_worked_example_with_the_caller_s_figures_is_the_caller_s_case(tmp_path) -> None:
    """Rent of 1,400 paid on the 8th: of the article's worked examples, the one with those figures answers
    "how much do I owe" (the values choose the sentence and are never quoted from the data)."""
    from citewise import api
    from citewise.engine.answerability import figures
    from citewise.engine.generate import case_figures
    from citewise.engine.records import FieldSpec, Relevance, Resolution

    assert figures("Rent of $1,400 paid on the 8th: $70.") == {"1400", "8th", "70"}
    assert figures("Rent of $1,400.00 paid on the 8TH: 12.50 and 75%") == {"1400", "8th", "12.5", "75"}

    def spec(key: str, data_type: str, sensitive: bool = False) -> FieldSpec:
        return FieldSpec(key=key, name=key, data_type=data_type, required=True, sensitive=sensitive)

    kept = Resolution(covered=True, relevance=Relevance(1.0), fields=[
        spec("monthly_rent", "currency"), spec("payment_date", "date"), spec("autopay", "boolean"),
        spec("units", "number"), spec("account_number", "text"), spec("income", "currency", sensitive=True)],
        collected={"monthly_rent": "1,400", "payment_date": "2026-04-08", "autopay": True, "units": 1,
                   "account_number": "2000", "income": "[provided]", "unknown_key": 5000})
    # no booleans, numbers under 2, text fields' digits, withheld or unknown fields
    assert case_figures(kept) == {"1400", "8th"}
    home = ingested_kb(tmp_path, {"late.md": (
        "---\nid: late-fees\ntitle: Late rent fees\nrecord_keeper: Halden Homes\ntopic: rent\n---\n"
        "## Business rules\n- Rent is due on the 1st; the grace period ends on the 5th.\n"
        "- A late fee of $50 is charged on the 6th, plus $10 for each later day, up to $150.\n"
        "## Required data\n- Monthly rent (currency, required, participant): The rent. Why: sets the fee.\n"
        "- Payment date (date, required, participant): When rent was paid. Why: counts the late days.\n"
        "## Examples\n- Rent of $900 paid on the 6th: $50 in late fees.\n"
        "- Rent of $1,400 paid on the 8th: $50 plus $10 for each of the 7th and the 8th = $70 in late fees.\n"
        "- Rent of $2,000 paid on the 20th: $150 in late fees, the maximum.\n")})
    out = api.ask("How much in late fees do I owe Halden Homes this month?", home=home,
                  confidence_threshold=0.0, collected_data={"monthly_rent": 1400, "payment_date": "2026-04-08"})
    text = out["response"]["text"]
    assert out["decision"] == "can_proceed" and text.index("$1,400") < min(text.index("$900"), text.index("$2,000"))
    other = api.ask("How much in late fees do I owe Halden Homes this month?", home=home,
                    confidence_threshold=0.0, collected_data={"monthly_rent": 2000, "payment_date": "2026-04-20"})
    text = other["response"]["text"]
    assert text.index("$2,000") < min(text.index("$900"), text.index("$1,400")), text
    # one figure each is no case: a rent of 900 paid on the 20th matches no example, and the rule leads
    mixed = api.ask("How much in late fees do I owe Halden Homes this month?", home=home,
                    confidence_threshold=0.0, collected_data={"monthly_rent": 900, "payment_date": "2026-04-20"})
    assert mixed["response"]["text"].startswith("A late fee of $50"), mixed["response"]["text"]


def test_a_worked_example_s_set_up_is_answered_with_its_outcome(tmp_path) -> None:
    """"Booked as Jonh Smyth, the passport says John Smith: how much to fix it?" The example whose set-up is
    the caller's case answers, but its set-up sentence states nothing; the outcome is the next sentence."""
    from citewise import api

    home = ingested_kb(tmp_path, {"names.md": (
        "---\nid: name-fixes\ntitle: Correcting a passenger name\nrecord_keeper: Halden Air\ntopic: names\n---\n"
        "## Business rules\n- Up to 3 wrong letters are corrected on the ticket.\n"
        "- More than 3 wrong letters for the same person: the ticket is reissued for $75.\n"
        "## Examples\nA ticket was booked for \"Jonh Smyth\" and the passport says \"John Smith\". Three letters "
        "differ in total: the correction is free. A ticket for \"Kate Morgan\" whose passport says "
        "\"Katherine Morgan\" has more than 3 letters different, so the reissue costs $75.\n")})
    out = api.ask("My ticket says Jonh Smyth but my passport says John Smith. How much does Halden Air charge "
                  "to fix it?", home=home, confidence_threshold=0.0)
    first = out["response"]["sections"][0]["answer_components"][0]
    assert first.startswith('A ticket was booked for "Jonh Smyth"') and "the correction is free" in first, first
    assert out["guardrails"]["passed"], out["guardrails"]
    # only an outcome of the set-up's own paragraph (the review: list items and the next example's set-up
    # were glued to sentences they do not follow)
    from citewise.engine.extractive import _units
    from citewise.engine.records import ContextChunk

    def units(text: str) -> list[str]:
        return [out for _, out in _units(ContextChunk("C1", "a#0", "a", "Examples", "examples", "medium", text))]

    listed = ("- A passenger whose flight is cancelled by a storm is rebooked on the next flight.\n"
              "- A passenger who misses a connection gets a meal voucher worth $15.\n")
    assert len(units(listed)) == 2, units(listed)
    prose = ("A passenger's surname is misspelt on the ticket. The agent corrects the spelling on the booking. "
             "A passenger asks to give the ticket to a friend. The agent refuses: tickets are never transferred.")
    assert len(units(prose)) == 4, units(prose)
    # ... which may be wrapped over lines or marked up (the fifth review: a hard-wrapped paragraph lost it)
    wrapped = ('A ticket was booked for **Jonh Smyth** and the passport says\n"John Smith". Three letters differ: '
               "the correction is free.")
    assert units(wrapped) == ['A ticket was booked for Jonh Smyth and the passport says "John Smith". Three letters '
                              "differ: the correction is free."], units(wrapped)
    # a set-up with figures of its own states no outcome either: an example's short paragraph is one answer
    # (parcels: "up to £75" was left out of an answer that quoted the £120 lamp's set-up)
    lamp = ("A £120 lamp sent on Priority arrives in a box that looks intact, but the base is cracked. It is "
            "concealed damage reported on day 4, so the claim is in time. Without Shield, up to £75 can be paid.")
    assert units(lamp) == [lamp], units(lamp)
    assert len(units(lamp + "\n\nA £40 vase arrives broken in a crushed box. Visible damage needs a report.")) == 2
    # a paragraph that may not be quoted whole (a Never-say phrase in one sentence) is read sentence by sentence
    chunk = ContextChunk("C1", "a#0", "a", "Examples", "examples", "medium", lamp)
    assert [o for _, o in _units(chunk, lambda t: "Shield" not in t)][:2] == [
        "A £120 lamp sent on Priority arrives in a box that looks intact, but the base is cracked.",
        "It is concealed damage reported on day 4, so the claim is in time."]


def test_a_call_transcript_is_quoted_by_turns_without_pleasantries_or_the_caller_s_own_case() -> None:
    """A call's lines are speaker turns: a sentence never runs from one into the next ("How can I help?
    Customer: Hi. A parcel's ..."), a greeting or thanks is no fact, and what the caller says is their case,
    quoted only as the question the agent's answer follows (parcels: "Thanks for calling Brackenmoor Parcel."
    and the caller's own story were an answer's claims)."""
    from citewise.engine.extractive import _units
    from citewise.engine.records import ContextChunk

    call = ("Agent: Good afternoon, you're through to Brackenmoor Parcel, Dana speaking. How can I help?\n"
            "Customer: Hi. A parcel's being delivered to me tomorrow, and I need to send a box back. Can your "
            "driver just take it away when they come?\n"
            "Agent: I'm afraid our drivers can't take parcels away on a delivery round. Which service was it?\n"
            "Customer: It was the Next Day service from the shop.\n"
            "Agent: A home collection costs £4.20 and needs 24 hours' notice.\n"
            "Customer: Great, thanks. Can we do Thursday?\n"
            "Agent: Thanks for calling Brackenmoor Parcel.")

    def units(text: str, source_type: str) -> list[str]:
        chunk = ContextChunk("C1", "c#0", "call.vtt", "call", "content", "medium", text,
                             metadata={"source_type": source_type})
        return [out for _, out in _units(chunk)]

    assert units(call, "transcript") == [
        "Can your driver just take it away when they come? Agent: I'm afraid our drivers can't take parcels "
        "away on a delivery round.", "Agent: A home collection costs £4.20 and needs 24 hours' notice."]
    # an article's lines are no turns, and its thanks may be a rule
    assert "Thank you letters are sent within 5 days." in units("Thank you letters are sent within 5 days.",
                                                                "markdown")
    # (the review) an acknowledgement that goes on to answer is the answer; a bare one answers a question; an
    # agent's sentence the caller reads back stays the agent's
    answered = ("Customer: What's the most you pay for a lost parcel?\n"
                "Agent: Okay, it's up to £25 without cover.\n"
                "Customer: Can I come Thursday?\n"
                "Agent: Sure. Collections need 24 hours' notice. They run between 08:00 and 18:00.\n"
                "Customer: They run between 08:00 and 18:00.\n"
                "Agent: Good morning, our lines are open 8am to 8pm on weekdays.")
    assert units(answered, "transcript") == [
        "Customer: What's the most you pay for a lost parcel? Agent: Okay, it's up to £25 without cover.",
        "Customer: Can I come Thursday? Agent: Sure. Collections need 24 hours' notice.",
        "They run between 08:00 and 18:00.", "Agent: Good morning, our lines are open 8am to 8pm on weekdays."]


def test_a_caller_labelled_by_name_is_told_from_the_agent() -> None:
    """Transcripts often label the caller by name ("Gareth:" beside "Agent:", or "Dana:" and "Marek:"): the
    conversion tells which speaker calls in (the one not labelled as the agent, or the one who does not open
    the call as an agent does), and what they say is their case, never a claim of the knowledge base."""
    from citewise.engine.extractive import _units
    from citewise.engine.records import ContextChunk
    from citewise.kb.convert.transcript import convert_text

    def callers(lines: list[str]) -> list[str] | None:
        cues = "\n\n".join(f"00:00:{i:02d}.000 --> 00:00:{i + 1:02d}.000\n{line}" for i, line in enumerate(lines))
        return convert_text("WEBVTT\n\n" + cues, "call.vtt").metadata.get("callers")

    assert callers(["Agent: Claims, this is Dana. How can I help?", "Gareth: A pipe burst.",
                    "Agent: The excess is £350.", "Gareth: Thanks."]) == ["Gareth"]
    assert callers(["Dana: Thanks for calling Tidewell, Dana speaking.", "Marek: Our trial ends Friday.",
                    "Dana: A trial can be extended once by up to 7 days.", "Marek: Great."]) == ["Marek"]
    assert callers(["Dana: Let's go through the new refund rule.", "Marcus: Sure, what changed?",
                    "Dana: Refunds now take 5 days.", "Marcus: Got it."]) is None  # a training talk: no caller
    # (review) what a caller says too is no sign of the agent: then nobody is taken for the caller
    assert callers(["Priya: Good morning, Tidewell billing.", "Marek: Hi, this is Marek from Brightfield.",
                    "Priya: The trial lasts 21 days.", "Marek: OK."]) is None
    assert callers(["Priya: Hi Marek, it's Priya returning your call.", "Marek: Thanks for calling me back.",
                    "Priya: The trial lasts 21 days.", "Marek: Great."]) is None
    assert callers(["Marek: Hi, thanks for picking up.", "Dana: Thanks for calling Tidewell.",
                    "Marek: OK.", "Dana: Bye."]) is None  # the opening is not the first turn's
    assert callers(["Staff Member: Hello.", "Customer: My card.", "Staff Member: Fine.", "Customer: OK."]) == [
        "Customer"]
    assert callers(["Agent Dana: Hi.", "Marek: Welcome to you too.", "Agent Dana: OK.", "Marek: Bye."]) == ["Marek"]
    # (second review) a department answers ("Member Services"), and a customer answering a callback says
    # "Marek speaking" and "thanks for calling back"
    for desk in ("Member Services", "Customer Care", "Guest Relations", "Tenant Liaison"):
        assert callers([f"<v {desk}>Good morning.", "<v Jane Smith>Hi, about my claim.", f"<v {desk}>Let me check.",
                        "<v Jane Smith>Thanks."]) == ["Jane Smith"], desk
    assert callers(["Marek: Hello, Marek speaking.", "Dana: Hi Marek, it's Dana from Tidewell returning your call.",
                    "Marek: Oh, thanks for calling back.", "Dana: The trial lasts 21 days."]) is None
    assert callers(["<v Aoife>Welcome to the coaching call.", "<v Maeve (role-play customer)>My card was declined.",
                    "<v Ciaran>Let's take it from there.", "<v Maeve (role-play customer)>Okay."]) == [
        "Maeve (role-play customer)"]  # a role in the voice tag
    call = ("Dana: Thanks for calling Tidewell, Dana speaking.\n"
            "Marek: Our trial is free for 60 days, right?\n"
            "Dana: No, the trial lasts 21 days and can be extended once by up to 7 days.\n"
            "Marek: The extension costs nothing, I was told it's automatic.")
    chunk = ContextChunk("C1", "c#0", "call.srt", "call", "content", "medium", call,
                         metadata={"source_type": "transcript", "callers": ["Marek"]})
    quoted = [out for _, out in _units(chunk)]
    assert not any("automatic" in q for q in quoted), quoted  # the caller's belief is no fact
    assert any("21 days" in q for q in quoted), quoted


def test_an_faq_entry_is_quoted_with_its_question_and_its_set_up_is_never_a_fact() -> None:
    """"My niece is 15." opens an FAQ question: quoted alone it would read as a fact of the knowledge base,
    and "No. At 15 and 16 the escort is optional." answers a question the reader never saw. Each entry is
    one unit: its question (set-up included) with its answer; a bare "No." takes the next sentence of its
    paragraph. A question with no answer, or set up at greater length, is never quoted, nor its set-up."""
    from citewise.engine.extractive import _units
    from citewise.engine.records import ContextChunk

    def units(text: str) -> list[str]:
        return [out for _, out in _units(ContextChunk("C1", "a#0", "a", "FAQ", "faqs", "medium", text))]

    faq = ("**Q: My niece is 15. Must she book the escort?**\nA: No. At 15 and 16 the escort is optional.\n\n"
           "**Q: I paid £90 for a Saver fare. What do I get if I cancel?**\nA: Either a credit of £90 or a "
           "refund of £50.\n\n**Q: Is the consent form needed?**\nA: Yes, signed by a parent. Bring it to "
           "check-in.\n")
    assert units(faq) == ["My niece is 15. Must she book the escort? No. At 15 and 16 the escort is optional.",
                          "I paid £90 for a Saver fare. What do I get if I cancel? Either a credit of £90 or a "
                          "refund of £50.",
                          "Is the consent form needed? Yes, signed by a parent.", "Bring it to check-in."], units(faq)
    # (the review) a set-up with no question, a question with no answer, a longer set-up: none is a fact
    assert units("**Q: My niece is 15. She flies alone in May.**\n") == []
    assert units("Q: Can I bring my dog?\nQ: Can I bring my cat?\nA: Yes, in a carrier under the seat.\n") == [
        "Can I bring my cat? Yes, in a carrier under the seat."]
    assert units("**Q:** I moved. I changed banks. I lost my card. Do I need a new one?\n**A:** Yes, order "
                 "it in the app today.\n") == ["Yes, order it in the app today."]
    # "Q." and "A." marks, which the sentence splitter cuts off; a bare "Yes." never takes the next section
    assert units("Q. Can I bring my dog?\nA. Yes, in a carrier under the seat.\n") == [
        "Can I bring my dog? Yes, in a carrier under the seat."]
    assert "Can I bring my dog? Yes." in units("Q: Can I bring my dog?\nA: Yes.\n\nThe cabin pet fee is $95.\n")
    # (the second review) an answer on the next line that leads into a list; two unmarked questions in a row
    # (the first has no answer); "Q."/"A." with a bare "Yes."
    assert units("Q: Which pets can fly?\nA: These:\n- Dogs under 8 kg\n- Cats\n") == [
        "Which pets can fly? These: Dogs under 8 kg; Cats."]
    assert units("**Can I bring my dog?**\n\n**Can I bring my cat?**\nYes, in a carrier under the seat.\n") == [
        "Can I bring my cat? Yes, in a carrier under the seat."]
    assert units("Q. Can I bring my dog?\nA. Yes. Dogs under 8 kg fly in the cabin.\n") == [
        "Can I bring my dog? Yes. Dogs under 8 kg fly in the cabin."]


def test_the_extractive_answer_gives_the_price_not_a_bare_number(tmp_path) -> None:
    """"What is the escort fee for my niece?" is answered by the fee, not by an FAQ whose numbers are ages ("My niece is
    15... At 15 and 16 the escort is optional"): a bare count earns no price-type bonus in the ranking."""
    from citewise import api

    home = northwind_home(tmp_path, {"escort.md": (
        "---\nid: escort\ntitle: Northwind escort service for young flyers\ntopic: escort\n---\n"
        "## Business rules\n- The escort service is booked by phone.\n- The escort service fee is $120 per flight.\n"
        "## FAQ\n**Q: My niece is 15. Must she book the escort service?**\nA: No. At 15 and 16 the escort "
        "service is optional.\n")})
    out = api.ask("What is the escort fee for my niece?", home=home, confidence_threshold=0.0)
    first = out["response"]["sections"][0]["answer_components"][0]
    assert "$120" in first, out["response"]["text"]


def test_a_bare_number_is_no_price_in_the_answer_s_ranking_either() -> None:
    """"What's the fee?" is not answered by "At 14 and 15 the service is optional" (the answerability check
    already said so; the extractive ranking gave such a sentence the type bonus)."""
    from citewise.engine.answerability import accepted_types, of_type, sentence_types

    accepted = accepted_types("What's the fee?", "amount")
    assert not of_type("At 14 and 15 the service is optional.", sentence_types("At 14 and 15 the service is "
                                                                                "optional."), accepted, True)
    assert of_type("The fee is £75 per direction.", sentence_types("The fee is £75 per direction."), accepted, True)
    assert of_type("It costs 25,000 points.", sentence_types("It costs 25,000 points."), accepted, True)
    assert of_type("Up to 3 children.", sentence_types("Up to 3 children."), accepted, False)  # not a price


def test_a_rule_about_the_collected_situation_is_part_of_the_answer(tmp_path) -> None:
    """Given that the customer has no letter of credit, "what will it cost" includes the deposit charged to
    those without one, though the question never mentions it (the extractive answer reads the field names
    the caller filled in)."""
    from citewise import api
    from citewise.kb.ingest import ingest

    src = tmp_path / "kb"
    src.mkdir()
    (src / "start.md").write_text(
        "---\nid: gas-start\ntitle: Starting gas service\nrecord_keeper: Northmere Gas\ntopic: start_service\n---\n"
        "## Business rules\n- Weekday turn-on appointment: $45.\n- Saturday turn-on appointment: $85.\n"
        "- Turn-off at move-out: $0.\n- Reconnection after a safety red tag: $60.\n"
        "- Without a letter of credit from a previous utility, charge a $180 deposit.\n"
        "## Required data\n- Service address (text, required, participant): Where gas is turned on. Why: books the"
        " technician.\n- Letter of credit (boolean, required, participant): A letter of good payment history from a"
        " previous utility. Why: waives the deposit.\n")
    ingest([src], tmp_path / "home", progress=False)
    question = "Please book my Northmere gas turn-on. What will it cost on a weekday?"
    given = api.ask(question, home=tmp_path / "home", confidence_threshold=0.0,
                    collected_data={"service_address": "77 Quarry Road", "letter_of_credit": False})
    assert given["decision"] == "can_proceed" and "$180" in given["response"]["text"], given["response"]["text"]
    assert "$45" in given["response"]["text"]


def test_a_plain_document_about_another_provider_is_not_searched(tmp_path) -> None:
    """The question names Northwind: a plain schedule whose title names Contoso (the other record keeper) is
    Contoso's, as an article with `record_keeper: Contoso` would be, and is filtered out like one; so is a
    memo whose title names nobody and whose text names Contoso alone. A plain document naming no provider,
    or several, stays."""
    from citewise.config import Context
    from citewise.engine.access import UNRESTRICTED
    from citewise.engine.inquiry import understand
    from citewise.engine.pipeline import open_snapshot
    from citewise.engine.search import search

    home = northwind_home(tmp_path, {
        "contoso.md": ("---\nid: contoso-loan\ntitle: Contoso plan loans\nrecord_keeper: Contoso\ntopic: loan\n---\n"
                       "## Business rules\n- Contoso loan setup fee: $50.\n"),
        "contoso-loan-fee-schedule.md": "# Contoso loan fee schedule\n\nThe loan setup fee is $50 and the "
                                        "loan maintenance fee is $25 a year.\n",
        "loan-fee-glossary.md": "# Loan fee glossary\n\nA loan setup fee is charged once, when the loan "
                                "is issued; a maintenance fee is charged every year.\n",
        # a title naming nobody; the text names one provider only, twice: it is that provider's
        "loan-fee-memo.md": "# Memo: loan fees from March\n\nFrom March, Contoso charges a loan setup fee of "
                            "$60 for every new loan. Contoso members pay it once.\n",
        # the text names both providers: a FAQ covering every provider is nobody's
        "loan-fee-faq.md": "# Loan fee questions\n\nNorthwind and Contoso both charge a loan setup fee "
                           "once, when the loan is issued.\n",
        # one mention in passing is no ownership (review): "Unlike Contoso, we ..." is not Contoso's memo
        "loan-fee-waiver.md": "# Why our loan setup fee is waived in March\n\nUnlike Contoso, we waive the loan "
                              "setup fee for every loan issued in March.\n"}, fields=True)
    ctx = Context(home=home)
    kb = open_snapshot(ctx)
    inquiry = understand(kb, ctx, {"question": "What loan setup fee does Northwind charge?"}, UNRESTRICTED)
    assert inquiry.detected_facets.get("record_keeper") == ["Northwind"]
    docs = {h.doc_id for h in search(kb, ctx, inquiry, k=10).hits}
    assert "contoso-loan-fee-schedule.md" not in docs and "loan-fee-glossary.md" in docs, docs
    assert "loan-fee-memo.md" not in docs and {"loan-fee-faq.md", "loan-fee-waiver.md"} <= docs, docs
    # a word of a provider's name written as a plain word names nobody ("every residential tenancy" is not
    # Wrenfield Residential's): only capitalised names count
    from citewise.kb.articles import PROVIDER
    assert kb.named_facets("loan-fee-glossary.md").get(PROVIDER) is None
    unnamed = understand(kb, ctx, {"question": "What is a loan setup fee?"}, UNRESTRICTED)
    assert "contoso-loan-fee-schedule.md" in {h.doc_id for h in search(kb, ctx, unnamed, k=10).hits}


def test_a_plain_document_that_states_the_asked_figure_answers_over_an_article_that_does_not(tmp_path) -> None:
    """The loan article leads a question about a fee it never lists; a plain fee schedule in the search
    has that fee's row: the schedule answers (no article, no fields to collect). A fee the article states
    stays the article's, though the schedule repeats it in more of the question's words."""
    from citewise import api
    from citewise.config import Context
    from citewise.engine.access import UNRESTRICTED
    from citewise.engine.inquiry import understand
    from citewise.engine.pipeline import open_snapshot
    from citewise.engine.resolve import plain_document_answers, resolve

    home = northwind_home(tmp_path, {"loan-checks.md": (
        "---\nid: northwind-loan-checks\ntitle: Northwind loan check delivery\nrecord_keeper: Northwind\n"
        "topic: loan\n---\n## Business rules\n- A loan check is mailed by first-class mail within 3 business days.\n"
        "- Overnight delivery of a loan check can be requested when the loan is approved.\n"
        "- A loan payoff statement is mailed on request and shows the amount that repays the loan.\n"
        "- Escrow credits are posted once the loan check mailing starts.\n"
        "## Required data\n- Mailing address (text, required, participant): Where the check goes. Why: delivery.\n"),
        "loan-fee-schedule.md": (
        "# Northwind savings plan loan fee schedule\n\n| Service | Fee |\n|---|---|\n"
        "| Loan setup fee for a savings plan loan | $75 |\n| Overnight delivery of a loan check | $30 |\n"
        "| Loan payoff statement | $10 |\n"),
        "team-notes.md": "# Team notes\n\nStarting April 1, any agent can approve a goodwill credit of $75.\n"},
        fields=True)
    ctx = Context(home=str(home))
    kb = open_snapshot(ctx)

    def resolved(question: str):
        return resolve(kb, ctx, understand(kb, ctx, {"question": question}, UNRESTRICTED))

    overnight = "How much does Northwind charge for overnight delivery of my loan check?"
    led = resolved(overnight)
    assert led.candidates[0].article_id == "northwind-loan-checks"  # the article leads, stating no fee for it
    assert led.article_id is None and led.lead_document == "loan-fee-schedule.md"
    answer = api.ask(overnight, home=home, confidence_threshold=0.0)
    assert answer["decision"] == "can_proceed" and "$30" in answer["response"]["text"], answer["response"]["text"]
    # a question about one thing only is too thin to weigh a document against an article (the review: "is
    # there a pet fee?" went to an application-fee workbook)
    from citewise.engine.search import search
    thin = understand(kb, ctx, {"question": "What is the overnight fee?"}, UNRESTRICTED)
    structured = {d for d, info in kb.docs.items() if info.structured}
    hits = search(kb, ctx, thin, k=20).hits
    assert plain_document_answers(kb, thin, hits, structured, "northwind-loan-checks") is None
    payoff = resolved("Is there a charge for a Northwind loan payoff statement?")  # yes/no: any sentence
    assert payoff.candidates[0].article_id == "northwind-loan-checks" and payoff.lead_document == "loan-fee-schedule.md"
    # two of the question's words in a note are not its answer without the most telling one ("escrow")
    credits = resolved("When do Northwind escrow credits start?")
    assert credits.lead_document != "team-notes.md", credits.lead_document
    setup = resolved("What is the Northwind loan setup fee?")
    assert setup.article_id == "northwind-loan" and setup.lead_document is None


def resolved_in(tmp_path: Path, files: dict[str, str], question: str):
    """The resolution of `question` in a KB made of `files` (name -> text)."""
    from citewise.config import Context
    from citewise.engine.access import UNRESTRICTED
    from citewise.engine.inquiry import understand
    from citewise.engine.pipeline import open_snapshot
    from citewise.engine.resolve import resolve
    from citewise.kb.ingest import ingest

    src = tmp_path / "kb"
    src.mkdir(parents=True)
    for name, text in files.items():
        (src / name).write_text(text)
    ingest([src], tmp_path / "home", progress=False)
    ctx = Context(home=str(tmp_path / "home"))
    kb = open_snapshot(ctx)
    return resolve(kb, ctx, understand(kb, ctx, {"question": question}, UNRESTRICTED))


def test_an_article_that_writes_a_compound_open_keeps_its_question(tmp_path) -> None:
    """"loan set up fee" in the article and "Loan setup fee" in a schedule are the same words (the third
    review: a bound on plain terms skipped the article's chunk and handed the question to the schedule)."""
    out = resolved_in(tmp_path, {
        "loans.md": "---\nid: northwind-loans\ntitle: Northwind plan loans\nrecord_keeper: Northwind\ntopic: loan\n"
                    "---\n## Business rules\n- The loan set up paperwork fee is $75, taken from the loan.\n"
                    "- One loan at a time.\n## Required data\n- Vested balance (currency, required, plan): The "
                    "balance. Why: caps the loan.\n",
        "schedule.md": "# Fee schedule\n\n| Service | Fee |\n|---|---|\n| Loan setup paperwork | $75 |\n"
                       "| Overnight check | $30 |\n"}, "How much does Northwind charge for the loan setup paperwork?")
    assert out.article_id == "northwind-loans" and out.lead_document is None, (out.article_id, out.lead_document)


def test_tied_provider_articles_ask_for_the_provider_before_a_plain_document_answers(tmp_path) -> None:
    """Two providers' parallel articles and a schedule naming neither: which provider's fee is not known, so
    the question is not handed to the schedule (the review of c6eee7b: the tie went unasked)."""
    files = {f"{name.lower()}.md": (
        f"---\nid: {name.lower()}-loan-checks\ntitle: {name} loan check delivery\nrecord_keeper: {name}\n"
        "topic: loan\n---\n## Business rules\n- A loan check is mailed by first-class mail within 3 days.\n"
        "- Overnight delivery of a loan check can be requested when the loan is approved.\n"
        "## Required data\n- Mailing address (text, required, participant): Where it goes. Why: delivery.\n")
        for name in ("Northwind", "Contoso")}
    files["loan-fee-schedule.md"] = ("# Loan fee schedule\n\n| Service | Fee |\n|---|---|\n"
                                     "| Overnight delivery of a loan check | $30 |\n| Loan payoff statement | $10 |\n")
    out = resolved_in(tmp_path, files, "How much is overnight delivery of a loan check?")
    assert out.tied and out.lead_document is None, (out.tied, out.lead_document)


def test_the_band_a_question_s_quantity_falls_in_is_its_answer() -> None:
    """"6 hours late" is answered by the row "5 hours to less than 8 hours: $200", not by its neighbours."""
    from citewise.engine.answerability import in_stated_band

    late = "We got in 6 hours late because they had no crew. What do we get?"
    assert in_stated_band(late, "5 hours to less than 8 hours: Travel voucher: $200.")
    assert not in_stated_band(late, "3 hours to less than 5 hours: Travel voucher: $100.")
    assert not in_stated_band(late, "8 hours or more: Travel voucher: $300.")
    assert in_stated_band(late, "A meal voucher for a delay of 3 hours or more.")
    far = "Flight BW 2217 (1,900 km) arrived 4 hours 15 minutes late."
    assert in_stated_band(far, "Flights of 1,500 km or more: EUR 50.")
    assert not in_stated_band(far, "Flights under 1,500 km: EUR 25.")
    assert not in_stated_band(far, "Bags up to 23 kg are free.")  # another unit: no band of it
    assert in_stated_band("My suitcase weighs 35 kilos.", "Bags over 32 kg are refused.")
    assert not in_stated_band("What does a late claim cost?", "5 hours to less than 8 hours: $200.")
    # ends as worded, no deadline or list read as a band, ages are not years (second review)
    assert not in_stated_band("We got in 8 hours late.", "5 hours to less than 8 hours: $200.")
    assert in_stated_band("We got in 5 hours late.", "5 hours to less than 8 hours: $200.")
    assert not in_stated_band("We got in 6 hours late.", "Tickets can be cancelled within 24 hours of booking.")
    assert not in_stated_band("We got in 4 hours late.", "Delays of 3 hours and 5 hours are handled differently.")
    assert not in_stated_band("I am 70 years old.", "Members with more than 5 years of service qualify.")
    assert in_stated_band("My bag weighs 23 kg.", "Bags up to 23 kg: $30.")
    assert not in_stated_band("My bag weighs 25 kg.", "Bags up to 23 kg: $30.")
    assert in_stated_band("It is 1,900 km.", "Between 1,500 and 3,500 km: EUR 400.")
    # third review: "no more than" is an upper bound, a range's own open end is no band of its own, an age
    # meets the years a sentence states
    assert not in_stated_band("4 hours late.", "Delays of no more than 3 hours: no compensation.")
    assert in_stated_band("2 hours late.", "Delays of no more than 3 hours: no compensation.")
    assert not in_stated_band("1 hour late.", "5 hours to less than 8 hours: $200.")
    assert in_stated_band("I am 70 years old.", "Travellers aged 70 years or over need a certificate.")
    codes = "Valid routing codes: " + ",".join(str(100000 + i) for i in range(500)) + " hours"
    assert not in_stated_band("It took 6 hours.", codes)  # bounded: long units are never read


def test_an_age_band_written_after_aged_holds_the_asker_s_age() -> None:
    """"Children aged 8 to 11 may take one connection" is the rule for a 9-year-old, though the band has
    no unit after it; its neighbours, and a baby's age in months, are not."""
    from citewise.engine.answerability import band_width, in_stated_band

    nine = "What does it cost for my 9-year-old daughter, and may she take a connecting flight?"
    assert band_width(nine, "Children aged 8 to 11 may take one connection of at least 90 minutes.") == 3
    assert band_width(nine, "The service is mandatory for children aged 5 to 11 flying alone.") == 6
    assert not in_stated_band(nine, "Children aged 5 to 7 may travel on non-stop flights only.")
    assert not in_stated_band(nine, "It is optional for passengers aged 12 to 17.")
    assert not in_stated_band(nine, "Babies aged 6 to 24 months fly on a lap.")  # months, not years
    assert in_stated_band(nine, "Only children aged under 12 need the form.")
    assert not in_stated_band(nine, "Passengers aged 65 or over get priority.")
    assert in_stated_band("I am 70 years old.", "Passengers aged 65 or over get priority.")
    # written with its unit too, one band, not two
    assert band_width(nine, "Children aged 8 to 11 years old may connect.") == 3
    # (the review) two ages joined by "and" are not a band unless "between" says so; "and under" bounds it
    assert not in_stated_band(nine, "Two children aged 4 and 12 flew together.")
    assert in_stated_band(nine, "Children aged between 4 and 12 pay half.")
    assert in_stated_band(nine, "Children aged 11 and under fly with an escort.")
    assert not in_stated_band(nine, "Babies aged 6 to 24 mos fly on a lap.")
    assert not in_stated_band(nine, "Babies aged 3 to 11 mths fly on a lap.")


def test_the_extractive_answer_leads_with_the_band_the_case_falls_in(tmp_path) -> None:
    from citewise import api

    home = northwind_home(tmp_path, {"delays.md": (
        "---\nid: delays\ntitle: Northwind flight delay compensation\ntopic: delays\n---\n"
        "## Business rules\n- Compensation depends on how late the flight arrived.\n"
        "- 3 hours to less than 5 hours: a $100 voucher.\n- 5 hours to less than 8 hours: a $200 voucher.\n"
        "- 8 hours or more: a $300 voucher.\n- Delays caused by weather get no compensation.\n"
        "- Compensation is paid as a voucher, never in cash.\n")})
    out = api.ask("Our Northwind flight got in 6 hours late. What compensation do we get?", home=home,
                  confidence_threshold=0.0)
    text = out["response"]["text"]
    assert "$200" in text and "$100" not in text.split("$200")[0], text
    edge = api.ask("Our Northwind flight got in 5 hours late. What compensation do we get?", home=home,
                   confidence_threshold=0.0)["response"]["text"]
    assert "$200" in edge and "$100" not in edge.split("$200")[0], edge  # "3 to less than 5 hours" excludes 5


def test_a_plan_type_word_in_a_title_does_not_make_a_document_another_plans(tmp_path) -> None:
    """"Business hours for customer support" names no Business plan: only a provider named in a title
    filters a plain document (review: the support-hours page vanished for a postpaid question)."""
    from citewise.config import Context
    from citewise.engine.access import UNRESTRICTED
    from citewise.engine.inquiry import understand
    from citewise.engine.pipeline import open_snapshot
    from citewise.engine.search import search
    from citewise.kb.ingest import ingest

    src = tmp_path / "kb"
    src.mkdir()
    for plan in ("Business", "Postpaid"):
        (src / f"{plan.lower()}.md").write_text(
            f"---\nid: larkspan-{plan.lower()}-billing\ntitle: Larkspan {plan} billing\nrecord_keeper: Larkspan\n"
            f"plan_type: {plan}\ntopic: billing\n---\n## Business rules\n- {plan} bills are issued monthly.\n")
    (src / "support-hours.md").write_text("# Business hours for customer support\n\nSupport phone lines are open "
                                          "8 a.m. to 8 p.m., Monday through Saturday.\n")
    ingest([src], tmp_path / "home", progress=False)
    ctx = Context(home=tmp_path / "home")
    kb = open_snapshot(ctx)
    inquiry = understand(kb, ctx, {"question": "When are Larkspan postpaid support phone lines open?"},
                         UNRESTRICTED)
    assert inquiry.detected_facets.get("plan_type") == ["Postpaid"]
    assert "support-hours.md" in {h.doc_id for h in search(kb, ctx, inquiry, k=10).hits}


def test_a_question_naming_two_providers_is_answered_from_each_one_s_article(tmp_path) -> None:
    """"How long do I have to dispute a charge at Northwind, and at Contoso?": each named provider's own
    article on the topic answers its part, in a section of its own, with its own warnings; the data to
    collect is both articles'. A question naming one provider is answered from its article alone."""
    from citewise import api
    from citewise.engine import answer

    contoso = ("---\nid: contoso-disputes\ntitle: Card disputes at Contoso\nrecord_keeper: Contoso\n"
               "topic: dispute\n---\n## Business rules\n- A card dispute must be filed within 110 days of the "
               "transaction.\n- Contoso decides a dispute within 30 days.\n## Guardrails\n- Always: mention the "
               "Contoso Ombudsman if the customer is unhappy.\n## Required data\n- Card number last four (text, "
               "required, participant): The card. Why: finds the transaction.\n")
    northwind = ("---\nid: northwind-disputes\ntitle: Card disputes at Northwind\nrecord_keeper: Northwind\n"
                 "topic: dispute\n---\n## Business rules\n- A card dispute must be filed within 120 days of the "
                 "transaction.\n- Northwind gives a temporary credit within 10 business days.\n## Guardrails\n"
                 "- Always: mention that a temporary credit can be reversed.\n- Never say: \"110 days\"\n"
                 "## Required data\n"
                 "- Transaction date (date, required, participant): When the charge was made. Why: starts the "
                 "filing window.\n")
    # a synonym whose expansion holds a provider's name ("chargeback" -> "Contoso chargeback") names no provider
    network = ("# Lost cards in the network\n\nEvery bank in the network asks customers to report a lost card "
               "within 2 days. A lost card is blocked at once and replaced in 5 business days.\n")
    home = northwind_home(tmp_path, {"contoso-disputes.md": contoso, "northwind-disputes.md": northwind,
                                     "lost-cards.md": network,
                                     "synonyms.yaml": "chargeback: [Contoso chargeback]\n"}, fields=True)
    question = "How long do I have to dispute a card charge at Northwind, and how long at Contoso?"
    for out in (api.ask(question, home=home, confidence_threshold=0.0),
                answer(question, home=home, ctx=None)):
        sections = out["response"]["sections"]
        assert out["guardrails"]["passed"], out["guardrails"]
        assert [s["topic"] for s in sections] == ["Card disputes at Northwind", "Card disputes at Contoso"], sections
        assert "120 days" in " ".join(sections[0]["answer_components"])
        assert "110 days" in " ".join(sections[1]["answer_components"])
        assert any("Ombudsman" in w for w in sections[1]["warnings"]), sections
        assert not any("Ombudsman" in w for w in sections[0]["warnings"]), sections
        assert {c["doc_id"] for c in out["citations"]} == {"northwind-disputes", "contoso-disputes"}
        assert out["metadata"]["required_data"]["compared"] == ["contoso-disputes"]
        assert {"transaction_date", "card_number_last_four"} <= set(out["missing_fields"]), out["missing_fields"]
    one = api.ask("How long do I have to dispute a card charge at Contoso?", home=home, confidence_threshold=0.0)
    assert {c["doc_id"] for c in one["citations"]} == {"contoso-disputes"}, one["citations"]
    assert one["metadata"]["required_data"]["compared"] == []
    # one provider's Never-say binds its own claims only: Northwind's "110 days" is Contoso's fact (review);
    # a provider named only where the question sets the scene is not compared
    moved = api.ask("I moved from Contoso to Northwind. How long do I have to dispute a card charge at Northwind?",
                    home=home, confidence_threshold=0.0)
    assert moved["metadata"]["required_data"]["compared"] == [], moved["metadata"]["required_data"]
    switching = api.ask("I'm switching from Contoso to Northwind, how long do I have to dispute a card charge at "
                        "Northwind?", home=home, confidence_threshold=0.0)  # the scene in the same sentence
    assert switching["metadata"]["required_data"]["compared"] == [], switching["metadata"]["required_data"]
    assert "anything for" not in switching["response"]["text"], switching["response"]["text"]
    # a named provider without an article on the topic is said to be missing, not dropped without a word (review)
    loan = api.ask("What is the loan setup fee at Northwind, and what is it at Contoso?", home=home,
                   confidence_threshold=0.0)
    assert loan["decision"] == "uncertain" and "anything for Contoso" in loan["response"]["text"], loan["response"]
    # ... but a plain document of nobody's in particular answers for every provider it is asked about
    lost = api.ask("How many days do I have to report a lost card at Northwind and at Contoso?", home=home,
                   confidence_threshold=0.0)
    assert {c["doc_id"] for c in lost["citations"]} == {"lost-cards.md"}, lost["citations"]
    assert "anything for" not in lost["response"]["text"], lost["response"]["text"]
    expanded = api.ask("How long do I have to file a chargeback at Northwind?", home=home, confidence_threshold=0.0)
    assert "Contoso" in expanded["metadata"]["facets_detected"]["record_keeper"]  # through the expansion
    assert expanded["metadata"]["required_data"]["compared"] == [], expanded["metadata"]["required_data"]


def test_a_word_of_a_provider_s_name_written_as_a_plain_word_names_nobody(tmp_path) -> None:
    """"In every residential tenancy ..." is not Wrenfield Residential's document (the second review of the
    provider read from a document's text); "Wrenfield Residential" written as a name, twice, is."""
    from citewise.config import Context
    from citewise.engine.pipeline import open_snapshot
    from citewise.kb.articles import PROVIDER
    from citewise.kb.ingest import ingest

    src = provider_articles(tmp_path, "deposit", "Deposits at", {name: [
        f"{name} holds the deposit in a protected account.", f"{name} returns it within 30 days.",
        f"{name} answers disputes in writing.", f"{name} keeps a copy.", f"{name} pays interest.",
        f"{name} signs the form."] for name in ("Wrenfield Residential", "Corvane Lettings")})
    (src / "basics.md").write_text("# Deposit protection basics\n\nIn every residential tenancy the deposit is "
                                   "protected. A residential landlord must say where.\n")
    # nor at the head of a sentence, where every word is capitalised (the fifth review)
    (src / "heads.md").write_text("# Deposit basics\n\nResidential tenancies need a protected deposit. Residential "
                                  "landlords must say where it is held.\n")
    # (the articles write "Residential" as a name more than this document writes it as a word: alone, the
    # word names Wrenfield Residential in a question)
    (src / "memo.md").write_text("# Memo on deposits\n\nWrenfield Residential now returns deposits in 20 days. "
                                 "Wrenfield Residential staff confirm it by email.\n")
    ingest([src], tmp_path / "home", progress=False)
    kb = open_snapshot(Context(home=tmp_path / "home"))
    assert kb.facet_detector.detect("Is a residential deposit protected?").get(PROVIDER) == ["Wrenfield Residential"]
    assert kb.named_facets("basics.md").get(PROVIDER) is None
    assert kb.named_facets("heads.md").get(PROVIDER) is None
    assert kb.named_facets("memo.md").get(PROVIDER) == ["Wrenfield Residential"]


def test_an_article_far_ahead_in_the_full_search_governs() -> None:
    """Fusion by rank cannot see that one article's best chunk scores twice any other's ("move my 403(b) to
    another provider" hit the rollover guide at 1.2, the beneficiary article at 0.58, yet two rankings put
    the beneficiary article first): an article ARTICLE_LEAD times ahead governs; a close second does not."""
    from types import SimpleNamespace

    from citewise.engine.resolve import ARTICLE_LEAD, article_far_ahead

    def hits(*scored: tuple[str, float]) -> list[SimpleNamespace]:
        return [SimpleNamespace(doc_id=d, score=s) for d, s in scored]

    structured = {"rollover", "beneficiary", "loan"}
    assert article_far_ahead(hits(("rollover", 1.2), ("guide.md", 0.9), ("beneficiary", 0.58), ("rollover", 0.5)),
                             structured) == "rollover"
    assert article_far_ahead(hits(("rollover", 1.2), ("beneficiary", 1.2 / ARTICLE_LEAD + 0.01)), structured) is None
    assert article_far_ahead(hits(("rollover", 1.2)), structured) is None  # nothing to be ahead of
    assert article_far_ahead(hits(("guide.md", 1.2), ("loan", 0.3)), structured) is None  # one article only


def test_through_the_engine_the_far_ahead_article_governs(kb_home: Path) -> None:
    from citewise import api

    out = api.ask("I'm still employed. Can I move my Summit 403(b) money to another 403(b) provider in the same "
                  "plan?", home=kb_home, confidence_threshold=0.0)
    assert out["article_reference"]["article_id"] == "summit-403b-rollover", out["article_reference"]
    # far ahead is no ambiguity: the article's confidence is the relevance, undiscounted (review: fused
    # scores read as a tie had halved it)
    fields = api.ask("I'm still employed. Can I move my Summit 403(b) money to another 403(b) provider in the same "
                     "plan?", home=kb_home, mode="required_data")
    relevance = fields["metadata"]["required_data"]["relevance"]["score"]
    assert fields["article_reference"]["confidence"] == round(relevance, 4), (fields["article_reference"], relevance)


def test_a_question_that_asks_two_things_gets_each_part_s_answer(tmp_path) -> None:
    """"What's the overdraft fee, and by when do I have to top up to get it reversed?" asks an amount and a
    deadline: each part's best sentence leads the answer, in the order asked (the whole question, typed by
    its "by when", had put the fee's sentence third). The fee's own sentence is the one that prices that
    very fee, not one with another amount near the word."""
    from citewise import api
    from citewise.engine.answerability import exact_match, question_parts

    assert question_parts("At Halden, what's the overdraft fee, and by when do I have to top up?") == [
        "At Halden, what's the overdraft fee", "by when do I have to top up?"]
    assert question_parts("How much is the membership fee? Is it refundable?") == [
        "How much is the membership fee?", "Is it refundable?"]
    for one in ("What happens if I leave and come back?", "What happens if I close my account and have a loan?",
                "Explain the difference between savings and what checking offers.", "Can I pay and how?"):
        assert question_parts(one) == [one], one  # one clause goes on; a bare "how" or a non-ask is no part
    assert question_parts("What is the fee and is it waived for students?") == [
        "What is the fee", "is it waived for students?"]
    asked = "What's the overdraft fee?"
    assert exact_match(asked, "Each item paid into overdraft is charged a $34 overdraft fee.")
    assert exact_match(asked, "Overdraft fee: $34 per item.")
    assert not exact_match(asked, "If the balance is back to -$50.00 by midnight, overdraft fees are reversed.")
    src = tmp_path / "kb"
    src.mkdir()
    (src / "od.md").write_text(
        "---\nid: halden-overdraft\ntitle: Overdraft fees at Halden Bank\nrecord_keeper: Halden Bank\n"
        "topic: overdraft\n---\n## Business rules\n"
        "- If the customer brings the balance back to -$50.00 or better by 11:59 p.m. on the next business day, "
        "the overdraft fees from the prior day are reversed automatically.\n"
        "- Agents may grant one courtesy refund of up to 2 overdraft fees in a rolling 12-month period.\n"
        "- Student accounts are never charged an overdraft fee; items are paid or returned at our discretion.\n"
        "- Each item over $5.00 paid into overdraft is charged a $34 overdraft fee, up to 3 fees a day.\n"
        "- Overdraft protection transfers from a linked savings account cost $10 each.\n")
    ingest_home = tmp_path / "home"
    from citewise.kb.ingest import ingest

    ingest([src], ingest_home, progress=False)
    out = api.ask("At Halden, what's the overdraft fee, and by when do I have to top up to get it reversed?",
                  home=ingest_home, confidence_threshold=0.0)
    components = out["response"]["sections"][0]["answer_components"]
    assert "$34 overdraft fee" in components[0] and "11:59 p.m." in " ".join(components), components


def test_a_part_asking_for_the_most_they_pay_is_answered_by_the_cap(tmp_path) -> None:
    """"..., and what's the most they pay?" asks for a bound on a sum (an amount question): the cap's
    sentence answers it, not one that says "at most 5 days" (the part's asking word is not its subject)."""
    from citewise import api
    from citewise.engine.answerability import question_type
    from citewise.kb.ingest import ingest

    assert question_type("what's the most they pay?") == question_type("What is the least I can borrow?") == "amount"
    assert question_type("What is the most important thing to bring?") != "amount"
    src = tmp_path / "kb"
    src.mkdir()
    (src / "bags.md").write_text(
        "---\nid: orla-bags\ntitle: Lost and delayed bags at Orla Air\nrecord_keeper: Orla Air\ntopic: baggage\n---\n"
        "## Business rules\n"
        "- Interim expenses for a delayed bag are reimbursed up to $50 per day, for at most 5 days.\n"
        "- A bag still missing 21 days after the report was filed is declared lost.\n"
        "- Orla Air's liability for a lost or damaged checked bag is capped at $1,800 per passenger.\n"
        "- A damaged bag claim must be submitted within 7 days of receiving the bag.\n")
    ingest([src], tmp_path / "home", progress=False)
    out = api.ask("With Orla Air, after how long is a missing bag treated as lost, and what's the most they pay?",
                  home=tmp_path / "home", confidence_threshold=0.0)
    components = out["response"]["sections"][0]["answer_components"]
    assert "21 days" in components[0] and "$1,800" in components[1], components


def test_a_lower_case_word_of_a_provider_s_name_is_no_second_provider(tmp_path) -> None:
    """"Does Tidewell Wireless charge a fee to unlock my mobile phone?" asks about Tidewell alone, though
    "mobile" tells Larkspan Mobile's articles from the others (the sixth review: the question was answered
    as a comparison, and with the check for unanswered providers it went to `uncertain`)."""
    from citewise import api
    from citewise.kb.ingest import ingest

    src = provider_articles(tmp_path, "unlock", "Unlocking a phone at", {name: [
        f"{name} unlocks a paid-off phone for a fee of {fee}.", f"{name} unlocks a phone within 2 business days of "
        "the request.", f"{name} customers request an unlock in the app."]
        for name, fee in (("Larkspan Mobile", "$0"), ("Tidewell Wireless", "$25"))})
    (src / "larkspan-plans.md").write_text(
        "---\nid: larkspan-plans\ntitle: Larkspan Mobile plans\nrecord_keeper: Larkspan Mobile\ntopic: plans\n---\n"
        "## Business rules\n- Larkspan Mobile plans include 5 GB of Mobile hotspot data.\n")
    ingest([src], tmp_path / "home", progress=False)
    out = api.ask("Does Tidewell Wireless charge a fee to unlock my mobile phone?", home=tmp_path / "home",
                  confidence_threshold=0.0)
    assert out["metadata"]["required_data"]["compared"] == [], out["metadata"]["required_data"]
    assert out["decision"] != "uncertain" and {c["doc_id"] for c in out["citations"]} == {"tidewell-unlock"}, out


def test_the_modal_may_is_no_month() -> None:
    from citewise.engine.answerability import sentence_types

    # "may" had typed every permission as a date, so that "participants may request one" answered "when".
    for sentence in ("Participants may request a hardship withdrawal.", "May I roll it over?",
                     "- May I pay early?", "Q: May a spouse sign?"):
        assert "date" not in sentence_types(sentence), sentence
    for sentence in ("Statements are mailed on May 1.", "Enrolment opens in May.", "Open from March to May.",
                     "Reviews run in mid-May.", "Due May 2026."):
        assert "date" in sentence_types(sentence), sentence
    when = "When can I request a withdrawal?"
    assert not assess(when, ["Participants may request a withdrawal."], "", set()).ok
    assert assess(when, ["Participants may request a withdrawal in May."], "", set()).ok


def test_a_period_that_starts_at_the_subject_does_not_time_it() -> None:
    # "paid within 3 days after approval" times the payment; it does not say how long approval takes
    paid = ["Payments are issued within 3 business days after approval."]
    assert not assess("How many days does it take to approve a request?", paid, "", set()).ok
    assert not assess("How long until the claim is approved?", paid, "", set()).ok
    # ... unless the question starts its period there too, or the subject is what the period times
    assert assess("How long after approval are payments issued?", paid, "", set()).ok
    assert assess("How many days does it take to approve a request?",
                  ["Requests are approved within 5 business days of receipt."], "", set()).ok


def test_a_question_for_an_interest_rate_asks_for_a_percentage() -> None:
    for question in ("What is the interest rate on a student loan for 2026-27?", "What's the APR on the card?",
                     "What is the current savings interest rate?"):
        assert question_type(question) == "percent", question
    asked = "What is the interest rate on a subsidized loan?"
    assert not assess(asked, ["Interest on a subsidized loan is paid while you are in school."], "", set()).ok
    assert assess(asked, ["The subsidized loan interest rate is 6.39% for 2025-26."], "", set()).ok


def test_a_question_for_a_number_or_address_is_answered_by_the_code_itself() -> None:
    from citewise.engine.answerability import sentence_types

    for question in ("What's the bank's BSB number?", "What is the customer service phone number for billing?",
                     "What number do I call to report fraud?", "What is the email address for claims?"):
        assert question_type(question) == "identifier", question
    for question in ("Which number do I call for help?", "What phone number should I use?", "Whats the phone number?",
                     "What is the number to call for claims?"):
        assert question_type(question) == "identifier", question
    # what one is, or something about one, is no request for a particular code (the review)
    for question in ("What's the maximum number of PINs?", "What's the email address change process?",
                     "What is a routing number?", "What is the difference between a BSB and an account number?",
                     "What is the account number length?", "What's the phone number policy?",
                     "What is the support code of conduct?",
                     # (the second review) a code named in passing is not asked for
                     "What happens if I give the wrong account number?", "What if I typed the wrong BSB?",
                     "What happens when I update my email address?",
                     "What is the difference between a BSB and the account number?"):
        assert question_type(question) != "identifier", question
    for question in ("What's the phone number of the claims team?", "What is the phone number, please?",
                     "What is the BIC?", "What is the SWIFT/BIC code?"):
        assert question_type(question) == "identifier", question
    for sentence in ("All accounts use BSB 633-104.", "Call 0808 157 0419 any time.", "Call 1-800-555-0199.",
                     "Email claims@insurer.example.", "See www.bank.example/help.", "SWIFT code ABCDEF2S.",
                     "Routing number 021000021.", "IBAN IE29 AIBK 9311 5212 3456 78", "Call [PHONE] today."):
        assert "identifier" in sentence_types(sentence), sentence
    for sentence in ("The fee is $1,500.", "Rates are 10.25% now.", "Plan years 2024-2026 apply.",
                     "It takes 3 to 5 days.", "Costs 12.50 a month.", "Version 2.13.0 is pinned.", "10-15 days",
                     "Ages 50-64", "In 2024-25.", "The team handles 10 000 calls a year.", "Dated 2024-03-15.",
                     "Due 15.03.2024.", "COVID19 rules apply.", "REFUNDED in full.", "Support took 1 250 000 calls.",
                     "He paid 123 456 dollars."):
        assert "identifier" not in sentence_types(sentence), sentence
    for sentence in ("Phone 07700 900123.", "Call +44 20 7946 0958.", "Call (555) 201-4477."):
        assert "identifier" in sentence_types(sentence), sentence
    bsb = "What's the bank's BSB number?"
    # a sentence about BSBs that gives none does not answer; the one with the code does
    assert not assess(bsb, ["Members can pay without a BSB and account number."], "", set()).ok
    assert assess(bsb, ["All accounts use BSB 633-104."], "", set()).ok
    # a number the answer masks is still stated by the KB: not "the knowledge base does not state it"
    assert assess("What is the support phone number?", ["Call [PHONE] on weekdays."], "", set()).ok
    assert assess("What is a routing number?", ["A routing number is a nine-digit code for a bank."], "", set()).ok


def test_a_plain_document_with_the_asked_code_answers_over_an_article_without_it(tmp_path) -> None:
    """The loan article talks about the phone line but gives no number; a plain contact list has it."""
    from citewise import api

    home = northwind_home(tmp_path, {"loan-line.md": (
        "---\nid: northwind-loan-line\ntitle: Northwind loan phone line\nrecord_keeper: Northwind\ntopic: loan\n"
        "---\n## Business rules\n- Loan questions can be answered on the loan phone line during business hours.\n"
        "- The loan phone line cannot change a loan's term.\n"),
        "contacts.md": "# Contact list\n\n- Northwind loan phone line: 0808 157 0419.\n"
                       "- Northwind head office: 12 Harbour Street.\n"}, fields=True)
    answer = api.ask("What is the Northwind loan phone number?", home=home, confidence_threshold=0.0)
    assert "0808 157 0419" in answer["response"]["text"], answer["response"]["text"]
    assert {c["doc_id"] for c in answer["citations"]} == {"contacts.md"}, answer["citations"]


def test_a_period_asked_by_another_name_is_a_duration_and_names_which_period() -> None:
    for question in ("How much notice do I need to give?", "How far in advance must I book?",
                     "What's the grace period for rent?", "What is the waiting period for illness?"):
        assert question_type(question) == "duration", question
    # the lookahead keeps the words that say which period: "grace", "notice" (not the type's "period")
    assert focus_terms("What's the grace period for rent?", set(), "duration") == ["grace", "rent"]
    assert "notic" in focus_terms("How much notice do I need to give?", set(), "duration")
    grace = "What's the grace period for rent?"
    assert not assess(grace, ["Rent can be paid online or by check."], "", set()).ok
    assert assess(grace, ["The grace period for rent ends 5 days after the due date."], "", set()).ok
    for question in ("What time does the leasing office close on Saturday?", "What hours is the help line open?",
                     "What's the cutoff time for same-day transfers?"):
        assert question_type(question) == "date", question
    assert assess("What time does the leasing office close on Saturday?",
                  ["Leasing office hours on Saturday: 10 a.m. to 5 p.m."], "", set()).ok
    assert question_type("How big can an attachment be?") == "count"
    # (the review) a window seat's fee is an amount, a time zone no time, a loan's rate a percentage
    assert question_type("What's the window seat fee?") == "amount"
    for question in ("What's the notice period I must give?", "What is the waiting period under the policy?",
                     "What is the cooling-off period, and can I cancel?"):
        assert question_type(question) == "duration", question
    assert question_type("What time zone are you in?") != "date"
    assert question_type("What is my loan's interest rate?") == "percent"
    assert not assess("How big can an attachment be?", ["Attach the itemized invoice to the claim."], "", set()).ok


def test_free_is_a_price_only_where_it_prices_something() -> None:
    from citewise.engine.answerability import sentence_types

    for sentence in ("Transfers are free to UK accounts.", "Calls are free to 0800 numbers.",
                     "The re-read is free.", "Replacement cards are free of charge.", "Transfers are fee-free.",
                     "It is free to open an account.", "Members get a free annual check-up."):
        assert "amount" in sentence_types(sentence), sentence
    for sentence in ("Feel free to call us any time.", "Call our toll-free line.", "Keep the area free of debris.",
                     "Use the hands-free kit.", "Withdrawals are tax-free.", "You are free to switch funds.",
                     "You're free to switch funds.", "The member is free to leave the plan."):
        assert "amount" not in sentence_types(sentence), sentence
    assert not assess("How much does it cost to call support?", ["Feel free to call support any time."], "", set()).ok


def test_a_how_long_question_prefers_the_period_of_its_very_subject() -> None:
    from citewise.engine.answerability import exact_match, timed_subject

    question = "How long does a card dispute investigation take?"
    timed = "Investigations finish within 45 calendar days; some can take up to 90 calendar days."
    near = ("Unauthorized card transactions reported within 60 days after the statement get provisional "
            "credit while the bank investigates.")
    assert timed_subject(question, timed) and exact_match(question, timed)
    assert not timed_subject(question, near)  # a card's reporting window; "investigates" stands far from it
    # a window's edge is no length of time (the review)
    refund = "How long does a refund take?"
    for window in ("No refund after 14 days.", "No refund within 14 days.", "Refunds are not issued within 14 days.",
                   "Refunds are not available for 30 days after purchase."):
        assert not timed_subject(refund, window), window
    for length in ("A refund takes 5 business days.", "Refunds take 5-7 business days.", "Refund time: 5 days.",
                   "A refund takes between 5 and 7 days.", "Refunds: 3 to 5 days."):
        assert timed_subject(refund, length), length
    # only a subject named before "take" or "last"; a when-question or a deadline is not a how-long one
    posted = "Provisional credit posting takes 10 business days."
    assert timed_subject("How long does posting take?", posted)
    assert not timed_subject("How soon is provisional credit posted?", posted)
    assert not timed_subject("When does posting take place?", posted)


def test_what_is_missing_is_said_in_the_question_s_own_words() -> None:
    paid = ["Payments are issued within 3 business days after approval."]
    question = "How many days does it take to approve or deny a hardship withdrawal request?"
    assert assess(question, paid, "", set()).missing == ["how long for approve or deny a hardship withdrawal request"]
    # masked data never comes back, and a long stretch falls back to the focus words
    assert assess("My email is [EMAIL]. How much does the wire transfer cost?", paid, "", set()).missing == [
        "the amount for wire transfer"]
    long = "How much does a wire cost if I send it from the branch in town on a weekday afternoon by myself?"
    assert assess(long, paid, "", set()).missing == [
        "the amount for wire send from branch town weekday afternoon myself"]


def test_what_is_missing_reads_as_a_person_would_say_it() -> None:
    """"the knowledge base does not state how long for until I can actually use that money again" (a rental
    answer): a subject that opens with its own preposition or conjunction takes no "for"."""
    assert assess("How long until I can actually use that money again?", ["The card is returned at check-in."],
                  "", set()).missing == ["how long until I can actually use that money again"]
    assert assess("How long does a transfer abroad take?", ["Transfers are free."], "", set()).missing == [
        "how long for transfer abroad"]


def test_an_acronym_s_long_form_never_answers_for_the_claim(tmp_path) -> None:
    """The context defines "Free Cancellation Period (FCP)"; an answer about when the FCP ends states no
    price, although the long form says "free". Reading claims with their acronyms' long forms (tried in
    15e6f00, taken out after a review) made this a confident answer: the long form gave the claim a price
    and a question's words it never says."""
    from citewise import api

    home = ingested_kb(tmp_path, {"cancel.md": (
        "---\nid: northwind-cancel\ntitle: Cancelling a Northwind booking\ntopic: cancellations\n---\n"
        "## Response frame\nExplain the Free Cancellation Period (FCP) before anything else.\n"
        "## Business rules\n- The FCP ends 48 hours before pick-up.\n"
        "- A booking cancelled inside the FCP is refunded to the original card.\n")})
    answer = api.ask("How much does it cost to cancel a booking after the FCP?", home=home,
                     confidence_threshold=0.0)  # routing off: under test is whether the answer states a price
    assert answer["decision"] == "uncertain", answer["response"]["text"]
    assert "the amount" in answer["response"]["text"]


def test_working_days_and_hyphenated_periods_answer_how_long() -> None:
    """UK articles count "working days" and write "a 10-working-day period", "a 12-month term": each is a period
    (a blind home-insurance set's right answer went `uncertain` as if it stated no time)."""
    from citewise.engine.answerability import assess, sentence_types

    for sentence in ("Oriel makes a claim decision within 10 working days of receiving all the documents.",
                     "The 10-working-day decision period starts when everything has arrived.",
                     "The loan has a 12-month term."):
        assert "duration" in sentence_types(sentence), sentence
    answer = assess("How long does Oriel take to make a decision on a claim once it has all the documents?",
                    ["Oriel makes a claim decision within 10 working days of receiving all the documents."], "",
                    {"oriel"})
    assert answer.missing == [], answer.missing
    assert "duration" not in sentence_types("Claims cost £10 per day of hire.")


def test_another_provider_s_article_is_named_not_quoted(tmp_path) -> None:
    """"What is the loan setup fee at Contoso?" where only Northwind has a loan article: the search has to drop
    Contoso to find anything, so what it finds is Northwind's rules. They are not quoted as the answer (nor its
    data asked for): the answer says the KB covers this only for another provider, and stays `uncertain`. (A
    blind SaaS KB's test half: Corvane's SSO asked, Quillstone's "$3 per user per month" shown.)"""
    from citewise import api

    contoso = ("---\nid: contoso-disputes\ntitle: Card disputes at Contoso\nrecord_keeper: Contoso\n"
               "topic: dispute\n---\n## Business rules\n- A card dispute must be filed within 110 days.\n")
    home = northwind_home(tmp_path, {"contoso-disputes.md": contoso}, fields=True)
    out = api.ask("What is the loan setup fee at Contoso?", home=home, confidence_threshold=0.0)
    text = out["response"]["text"]
    assert out["decision"] == "uncertain" and out["metadata"]["required_data"]["facets_relaxed"], out["metadata"]
    assert "$75" not in text and "only for another provider" in text and "Northwind savings plan loans" in text
    assert out["citations"] == [] and out["missing_fields"] == [] and out["response"]["sections"] == []
    own = api.ask("What is the loan setup fee at Northwind?", home=home, confidence_threshold=0.0)
    assert "$75" in own["response"]["text"] and own["citations"]


def test_another_provider_s_data_is_not_asked_for(tmp_path) -> None:
    """The same question in `required_data` mode, and with interrupts on: Northwind's loan article asks for
    Northwind's data (vested balance...), which is not what a Contoso loan needs. The list is empty, the
    decision `uncertain`, the note names the article found; nothing pauses to ask. (Left by the session that
    named the article in answers: the field list and the interrupt still asked for its data.)"""
    from citewise import api

    contoso = ("---\nid: contoso-disputes\ntitle: Card disputes at Contoso\nrecord_keeper: Contoso\n"
               "topic: dispute\n---\n## Business rules\n- A card dispute must be filed within 110 days.\n")
    home = northwind_home(tmp_path, {"contoso-disputes.md": contoso}, fields=True)
    fields = api.required_data("What is the loan setup fee at Contoso?", home=home)
    assert fields["decision"] == "uncertain" and fields["missing_fields"] == [], fields
    assert fields["required_fields"] == {"participant_data": [], "plan_data": []}
    assert fields["article_reference"]["article_id"] == "northwind-loan"
    assert "only for another provider" in fields["response"]["text"] and "Contoso" in fields["response"]["text"]
    paused = api.ask("What is the loan setup fee at Contoso?", home=home, interrupt_on_missing_data=True)
    assert paused.get("status") != "interrupted" and paused["decision"] == "uncertain", paused.get("interrupt")
    own = api.required_data("What is the loan setup fee at Northwind?", home=home)
    assert own["decision"] == "needs_data" and "vested_balance" in own["missing_fields"], own
    # (review) nor is a checklist built from it, through the graph or the plain pipeline
    from citewise.engine import answer

    for built in (api.artifact("checklist", "What is the loan setup fee at Contoso?", home=home),
                  answer("What is the loan setup fee at Contoso?", home=home, mode="artifact",
                         artifact_type="checklist")):
        assert built["decision"] == "uncertain" and not built.get("artifact"), built.get("artifact")
        assert "$75" not in built["response"]["text"] and "Vested" not in built["response"]["text"]
        assert "only for another provider" in built["response"]["text"] and built["missing_fields"] == []



def test_a_plan_type_the_article_does_not_carry_is_still_answered_from_it(tmp_path) -> None:
    """(Review) "Can I use SSO on the Northwind Team plan?" where Northwind's SSO article is for the Business
    plan: the article is the named provider's own, and "SSO is available on the Business plan only" answers."""
    from citewise import api

    head = "---\nid: {id}\ntitle: {title}\nrecord_keeper: Northwind\nplan_type: {plan}\ntopic: {topic}\n---\n"
    sso = head.format(id="northwind-sso", title="Northwind single sign-on", plan="Business", topic="sso") + (
        "## Business rules\n- SSO is available on the Business plan only.\n- SSO setup takes one business day.\n")
    seats = head.format(id="northwind-seats", title="Northwind seats", plan="Team", topic="seats") + (
        "## Business rules\n- The Team plan has at most 20 seats.\n")
    home = northwind_home(tmp_path, {"northwind-sso.md": sso, "northwind-seats.md": seats}, fields=True)
    out = api.ask("Can I use SSO on the Northwind Team plan?", home=home, confidence_threshold=0.0)
    assert "Business plan only" in out["response"]["text"], out["response"]["text"]
    assert "only for another provider" not in out["response"]["text"] and out["citations"]


def test_a_thing_asked_for_is_not_named_by_a_past_participle_of_its_stem() -> None:
    """"How many guest passes ...?" answered by "3 months have passed since ..." (a blind gyms KB's dev half:
    the stemmer makes "passes" and "passed" one term, so the answer seemed to name the passes)."""
    question = "How many guest passes do members get each month?"
    assert assess(question, ["At least 3 months have passed since the agreement start date."], "", set()).missing
    assert assess(question, ["Members get 2 guest passes each month."], "", set()).missing == []
    assert assess(question, ["Members get 2 guest passes each month; unused ones have passed their date."], "",
                  set()).missing == []  # the thing is named too
    # (second review) only a thing asked for by name, and only a participle: whether a provider offers a thing
    # is answered by its participle; "bed" is no participle
    assert assess("Does Contoso offer refunds?", ["Unused months are refunded in full."], "", {"contoso"}).ok
    assert assess("How many beds does the cabin have?", ["Each cabin has one double bed."], "", set()).ok
