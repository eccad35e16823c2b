"""The ``[study]`` table of a protocol file: questionnaire layout and every rater-facing text.

A new language or a new study is a new protocol file, not new code: all wording shown to raters
(consent, native-speaker confirmation, instruction pages, question templates, checkpoint and
qualification items, buttons, completion text) lives here, with the text direction so that
right-to-left scripts render correctly. Defaults are the SimLex-999 values (Hill et al. 2015,
sections 3.2-3.5); ``hyperlex.toml`` and ``tr9856.toml`` set their papers' values explicitly.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from string import Formatter
from typing import Annotated, Literal

from lexgold.protocols import Invalid, between, length, load_protocol, parse_section
from lexgold.protocols.schema import one_line

#: the upper bounds of the study's sizes and durations (docs/protocols.md, "Bounds"): far above
#: any published study (SimLex-999: 10 tranches of 99 pairs, 50 raters each; HyperLex: 9
#: duplicates a tranche) yet small enough that a design and its slots fit in memory
MAX_TRANCHES, MAX_PAIRS_PER_TRANCHE, MAX_RATERS_PER_TRANCHE = 10_000, 10_000, 10_000
#: ... and the longest claim (30 days) and first-page wait (1 day)
MAX_CLAIM_S, MAX_FIRST_ANSWER_S = 30 * 86_400, 86_400
Tranches = Annotated[int, between(0, MAX_TRANCHES)]
PairsPerTranche = Annotated[int, between(0, MAX_PAIRS_PER_TRANCHE)]
Raters = Annotated[int, between(1, MAX_RATERS_PER_TRANCHE)]

SIMLEX_INSTRUCTIONS = [
    "Two words are synonyms if they have very similar meanings. Synonyms represent the same "
    "type or category of thing. Here are some examples of synonym pairs: cup / mug, "
    "glasses / spectacles, envy / jealousy.\n\n"
    "In practice, word pairs that are not exactly synonymous may still be very similar. "
    "Cat / dog are quite similar, and so are drizzle / rain, but gem / jewel are more similar.\n\n"
    "Some words are associated but not similar: car / petrol and cup / coffee go together, but "
    "a cup is not similar to coffee. Such pairs should get a low rating.\n\n"
    "You will rate how similar the two words of each pair are by moving a slider from 0 (not "
    "similar at all) to 6 (very similar). If you are unsure, think back to the synonym "
    "examples and ask how close the two words are to being synonyms.",
]


@dataclass
class Texts:
    """Every text a rater sees. ``{word1}``, ``{word2}``, ``{topic}``, ``{current}``,
    ``{total}`` and ``{code}`` are filled in where noted."""

    title: str = "Word similarity study"
    consent_heading: str = "Before you start"
    #: ``{minutes}``: the expected duration (``seconds_per_item`` times the tranche's items)
    consent_text: str = ("You are invited to rate how similar pairs of English words are. The "
                         "task takes about {minutes} minutes. Your answers are stored with a "
                         "random participant number and, if you came from a recruitment "
                         "platform, with your platform ID (needed to pay you); they are used for "
                         "research only. You may stop at any time.")
    #: under the consent text, filled from ``[study.consent]`` (left out when its key is empty)
    consent_contact: str = ("Questions about the study, or want your answers withdrawn? "
                            "Contact the researcher: {contact}.")
    consent_ethics: str = "The study was approved by research ethics review: {ethics_reference}."
    consent_label: str = "I agree to take part in this study."
    native_speaker_label: str = ("I confirm that I am a native speaker of English. I understand "
                                 "that work will be rejected if the pattern of my responses "
                                 "indicates otherwise.")
    start_button: str = "Start"
    next_button: str = "Next"
    submit_button: str = "Submit and continue"
    instructions_heading: str = "Instructions"
    instructions: list[str] = field(default_factory=lambda: list(SIMLEX_INSTRUCTIONS))
    #: the question above each slider; ``{word1}``/``{word2}`` (and ``{topic}``)
    question: str = "How similar are {word1} and {word2}?"
    #: per part of speech, overrides ``question`` (HyperLex: "Is TO {word1} a type of ...")
    question_by_pos: dict[str, str] = field(default_factory=dict)
    scale_min_label: str = "not similar"
    scale_max_label: str = "very similar"
    binary_yes_label: str = "related"
    binary_no_label: str = "unrelated"
    #: Best-Worst Scaling (``task = "bws"``): the two questions above a tuple's radio groups
    best_question: str = "Which pair is most similar?"
    worst_question: str = "Which pair is least similar?"
    #: a BWS answer naming the same pair as both most and least
    error_same_pair: str = "Please choose two different pairs: the most and the least similar."
    topic_label: str = "Topic: {topic}"
    calibration_note: str = ("You rated this pair on the previous page: please give it the same "
                             "rating again.")
    untouched_hint: str = "Move or click every slider, even to keep its starting value."
    #: the same on a touch screen (shown instead where the pointer is coarse)
    untouched_hint_touch: str = "Move or tap every slider, even to keep its starting value."
    #: next to the blocked Submit button; ``{left}`` = pairs not answered yet
    submit_blocked: str = ("Still to answer: {left}. Every pair needs an answer (move each "
                           "slider, even to keep its start) before you continue.")
    #: shown in a pair not answered yet once the rater tries to continue
    unanswered_label: str = "Not answered yet"
    #: shown when the browser runs no JavaScript (the sliders need it)
    javascript_needed: str = ("This study needs JavaScript for its sliders. Please turn "
                              "JavaScript on in your browser and reload the page.")
    checkpoint_heading: str = "Check question"
    checkpoint_prompt: str = "Which of these pairs is the most similar?"
    qualification_heading: str = "Qualification question"
    progress: str = "Page {current} of {total}"
    error_incomplete: str = "Please answer every pair before you continue."
    error_invalid: str = "This answer could not be accepted. Please reload the page."
    #: an entry link whose platform parameter is empty or malformed (an unfilled
    #: ``{{%PROLIFIC_PID%}}``); ``{parameter}`` names it
    error_entry_link: str = ("The link that opened this study is not complete: {parameter} holds "
                             "no valid ID. Please go back to the study platform and open the "
                             "study from there again.")
    error_retry: str = ("The site is briefly unavailable. Please wait a few seconds and try again "
                        "(reload the page); the answers you already sent are kept.")
    repeat_notice: str = ("That page had already been sent (from another tab or window, or "
                          "before going back); the answers sent first were kept. This is where "
                          "you are now.")
    error_no_consent: str = "Please tick both boxes to take part."
    completion_heading: str = "Thank you!"
    completion_text: str = "You have finished the study. Thank you for your work!"
    completion_link: str = "Return to the study platform"
    #: above the code in its box on the completion and screen-out pages
    code_label: str = "Your code"
    #: the copy button beside the code (shown where the browser runs JavaScript)
    copy_button: str = "Copy code"
    copied_notice: str = "Code copied."
    #: new raters while the study is paused or closed (``lexgold study pause|close``)
    paused_heading: str = "The study is paused"
    paused_text: str = ("This study is paused at the moment and takes no new participants. "
                        "Please try again later, or return the study on the platform you came "
                        "from.")
    closed_heading: str = "The study has closed"
    closed_text: str = ("This study has closed and takes no new participants. Thank you for your "
                        "interest; please return the study on the platform you came from.")
    #: raters already in, when the researcher stopped them too (``--stop-now``)
    paused_current_text: str = ("The researcher has paused this study. The answers you sent are "
                                "kept; please come back later with the same link.")
    closed_current_text: str = ("The researcher has closed this study. The answers you sent are "
                                "kept; please contact the researcher about your work.")
    #: the link to the platform on those pages (no code: it gives no credit)
    platform_link: str = "Back to the study platform"
    screened_out_heading: str = "Thank you for your interest"
    qualification_retry: str = ("That answer was not correct. Please read the question again; "
                                "attempts left: {left}.")
    screened_out_text: str = ("Your answer to the qualification question was not correct, so "
                              "the study ends here and no answers were kept.")
    expired_text: str = ("Your session expired and your place was given to another "
                         "participant. Thank you for your time.")
    full_text: str = "This study has all the participants it needs. Thank you for your interest."
    error_heading: str = "Something went wrong"
    #: a platform ID already started in another browser: asked before it continues here
    resume_heading: str = "Continue in this browser?"
    resume_text: str = ("This participant ID has already started the study in another browser. "
                        "If that was you, you can continue here; the other browser will then "
                        "stop working. If it was not you, please close this page and contact "
                        "the researcher.")
    resume_button: str = "Continue here"
    #: the same platform ID without the study and session IDs of the rater's own link
    resume_refused: str = ("This participant ID has already started the study in another "
                           "browser. To continue here, open the study again from the platform "
                           "(its link carries your study and session IDs). If that does not "
                           "work, please contact the researcher, who can send you a link that "
                           "moves your place to this browser.")
    #: a link from the researcher that moves a place to this browser, already used or expired
    move_link_invalid: str = ("This link has already been used or has expired. Please contact "
                              "the researcher for a new one.")
    #: an entry link the study does not accept (e.g. the anonymous link of a Prolific study)
    entry_refused: str = ("This link is not valid for this study. Please start the study from "
                          "the platform you were invited on.")
    #: too many new participants or places from one connection in a short time
    error_busy: str = ("Too many participants have started from this connection. Please try "
                       "again later.")


#: the longest ``[study.consent]`` contact or ethics reference (characters), extra paragraph,
#: and the most extra paragraphs
MAX_CONSENT_LINE, MAX_CONSENT_PARAGRAPH, MAX_CONSENT_PARAGRAPHS = 500, 5_000, 20


@dataclass
class Consent:
    """``[study.consent]``: what the consent page says beyond ``texts.consent_text`` (ethics
    review asks for it: who to contact, under which approval; e.g. the British Psychological
    Society's Code of Human Research Ethics, 2021, section 4.2 on valid consent). Also given
    at ``lexgold study create --consent FILE`` (these keys at the top of a small TOML file)."""

    #: who raters write to (name and e-mail address), shown in ``texts.consent_contact``
    contact: Annotated[str, length(0, MAX_CONSENT_LINE), one_line()] = ""
    #: the ethics approval the study runs under (board and reference), in
    #: ``texts.consent_ethics``
    ethics_reference: Annotated[str, length(0, MAX_CONSENT_LINE), one_line()] = ""
    #: more paragraphs after the consent text (data kept, payment, risks ...); ``{minutes}``
    #: is filled in as in ``consent_text``
    paragraphs: Annotated[list[Annotated[str, length(1, MAX_CONSENT_PARAGRAPH)]],
                          length(0, MAX_CONSENT_PARAGRAPHS)] = field(default_factory=list)


#: ``[[study.checkpoints]] before`` of the checks shown right after the instructions
START = "start"


@dataclass
class Checkpoint:
    """A multiple-choice check (SimLex section 3.2): pick the most similar of associated pairs.

    Shown before the first group of part of speech ``before`` (section 3.4), or, with ``before
    = "start"``, right after the instructions, before the first page of pairs: section 3.2's
    "two checkpoint questions, one with abstract examples and one with concrete examples"
    (several such checks are shown in the order listed)."""

    before: str = "N"
    options: list[list[str]] = field(default_factory=list)
    answer: int = 0


@dataclass
class Qualification:
    """HyperLex section 4.4: one question after the guidelines; a wrong answer ends the study
    once ``attempts`` answers were wrong. HyperLex allowed one; the default is two, Prolific's
    guidance for comprehension checks ("give participants at least two attempts", Prolific's
    researcher help centre, "Prolific's attention and comprehension check policy")."""

    prompt: str = ""
    options: list[str] = field(default_factory=list)
    answer: int = 0
    attempts: Annotated[int, between(1, 10)] = 2


@dataclass
class BwsCheckpoint:
    """A Best-Worst check tuple with an obvious answer: ``pairs`` ([word1, word2] each), the
    0-based ``best`` and ``worst`` pair."""

    pairs: list[list[str]] = field(default_factory=list)
    best: int = 0
    worst: int = 1


@dataclass
class BwsStudy:
    """``[study.bws]``: the tuple design of a Best-Worst Scaling study (Kiritchenko & Mohammad
    2016, section 3; lexgold.study.bws)."""

    #: pairs per tuple (K&M: 4)
    tuple_size: Annotated[int, between(2, 20)] = 4
    #: tuples per pair of the set: n_tuples = round(tuples_per_pair x N) (K&M: 2N)
    tuples_per_pair: Annotated[float, between(0, 100, low_open=True)] = 2.0
    #: tuples only of pairs of one part of speech
    pos_pure: bool = True
    #: rounds of swaps that remove repeated co-occurrences (K&M's random-with-swaps)
    swap_rounds: Annotated[int, between(0, 100_000)] = 200
    #: tuples per page (one per row)
    tuples_per_page: Annotated[int, between(1, 100)] = 5
    #: tuples per tranche (0 tranches: as many tranches as this gives)
    tuples_per_tranche: Annotated[int, between(1, MAX_PAIRS_PER_TRANCHE)] = 100
    #: tuples shown in every tranche (as the slider's consistency set)
    consistency_tuples: Annotated[int, between(0, 1_000)] = 2
    #: check tuples, spread evenly through every tranche
    checkpoints: list[BwsCheckpoint] = field(default_factory=list)


@dataclass
class StudyConfig:
    """Schema of ``[study]``. Counts are per tranche unless the name says otherwise."""

    #: ``slider`` (SimLex, HyperLex: integer scale), ``binary`` (TR9856 related/unrelated) or
    #: ``bws`` (Best-Worst Scaling of tuples of pairs, ``[study.bws]``)
    task: Literal["slider", "binary", "bws"] = "slider"
    language: str = ""
    direction: Literal["ltr", "rtl"] = "ltr"
    scale_min: Annotated[int, between(-1_000, 1_000)] = 0
    scale_max: Annotated[int, between(-1_000, 1_000)] = 6
    #: where every slider starts: an integer on the scale, or ``random`` (recorded per answer)
    slider_start: int | Literal["random"] = 3
    #: how words are shown: SimLex lower case, HyperLex upper case ("Is TO RUN a type of ...")
    word_case: Literal["as-is", "lower", "upper"] = "lower"
    #: number of tranches; 0 = as many as ``unique_per_tranche`` gives
    tranches: Tranches = 10
    #: the paper's nominal count of unique pairs per tranche, reported against the actual one
    unique_per_tranche: Annotated[int, between(1, MAX_PAIRS_PER_TRANCHE)] = 99
    #: consistency pairs shown in every tranche, per part of speech (SimLex: 14 N, 4 V, 2 A)
    consistency: dict[str, Annotated[int, between(0, 1_000)]] = field(
        default_factory=lambda: {"N": 14, "V": 4, "A": 2})
    #: pairs shown twice to the same rater (HyperLex: 9 per tranche)
    duplicates_per_tranche: Annotated[int, between(0, 1_000)] = 0
    #: order of the part-of-speech batches; ``topic`` groups by topic instead (TR9856)
    pos_order: list[str] = field(default_factory=lambda: ["N", "A", "V"])
    group_by: Literal["pos", "topic"] = "pos"
    group_size_max: Annotated[int, between(1, 1_000)] = 7
    group_size_min: Annotated[int, between(0, 1_000)] = 6
    #: repeat the previous group's last pair first (calibration, SimLex section 3.4)
    calibration_repeat: bool = True
    #: Decision: the repeat stays inside a part-of-speech batch so groups stay POS-pure
    calibration_across_batches: bool = False
    #: put a consistency pair second in each group (SimLex) rather than at random places
    consistency_second: bool = True
    #: slots a tranche starts with (raters who may complete it)
    raters_per_tranche: Raters = 50
    #: 0: the slots above are all; n > 0: a tranche gets more slots until it has n accepted
    #: raters, completed and not excluded by ``[process.exclusions]`` (HyperLex section 4.4: 10)
    min_accepted_raters: Annotated[int, between(0, MAX_RATERS_PER_TRANCHE)] = 0
    #: ``uniform``: every tranche gets ``raters_per_tranche`` slots. ``adaptive``
    #: (:mod:`lexgold.live.allocator`): every tranche first gets ``first_round_raters``
    #: slots, and the rest of ``budget_ratings`` goes to top-up tranches of the pairs whose
    #: means are least precise (:func:`lexgold.crowd.allocation_criteria.error_gain`), until
    #: ``target_reliability`` is reached
    allocation: Literal["uniform", "adaptive"] = "uniform"
    #: adaptive: slots each tranche of the design starts with
    first_round_raters: Raters = 3
    #: adaptive: ratings (pair showings of completed or open slots, checkpoints not counted)
    #: the study may spend in all; 0 = what the uniform design spends (``raters_per_tranche``
    #: times the showings of every tranche)
    budget_ratings: Annotated[int, between(0, 100_000_000)] = 0
    #: adaptive: no more top-ups once the split-half reliability of the pair means
    #: (Spearman-Brown corrected) reaches this; 1 = spend the whole budget
    target_reliability: Annotated[float, between(0, 1, low_open=True)] = 0.9
    #: adaptive: unique pairs of a top-up tranche (the least precise ones); 0 =
    #: ``unique_per_tranche``; the tranche also holds the consistency set, calibration repeats,
    #: duplicates and checkpoints of the layout
    topup_pairs: PairsPerTranche = 0
    #: adaptive: slots of a top-up tranche (fewer when the budget left is smaller)
    topup_raters: Raters = 2
    #: an unfinished claim on a tranche slot may be given to another rater after this long
    claim_timeout_s: Annotated[int, between(1, MAX_CLAIM_S)] = 3600
    #: Decision: a claim whose first page is not answered within this time is released (a
    #: reader needs a minute or two for one page; a script that claims places and walks away
    #: must not hold them for ``claim_timeout_s``)
    first_answer_timeout_s: Annotated[int, between(1, MAX_FIRST_ANSWER_S)] = 600
    #: Decision: a page sent sooner than this many seconds per pair (checkpoints count as one)
    #: after it was given is counted in the rater's ``fast_pages`` (export column): SimLex-999
    #: raters took 8-21 minutes for ~120 showings (section 3.5), over 4 s a pair; 0 = off
    min_seconds_per_pair: Annotated[float, between(0, 3_600)] = 1.0
    #: seconds per shown item (pair, checkpoint, qualification): one number (an average) or
    #: two (a range); the consent page states the duration of a tranche from it
    seconds_per_item: list[Annotated[float, between(0, 3_600, low_open=True)]] = field(default_factory=lambda: [3.9, 10.3])
    #: topic id -> the title shown to raters (TR9856: the motion); ``study create`` fills it
    #: from the topics file, and a protocol may set it; a topic without a title shows its id
    topic_titles: dict[str, str] = field(default_factory=dict)
    texts: Texts = field(default_factory=Texts)
    consent: Consent = field(default_factory=Consent)
    checkpoints: list[Checkpoint] = field(default_factory=list)
    qualification: Qualification | None = None
    bws: BwsStudy = field(default_factory=BwsStudy)

    def check(self) -> None:
        """Rules across keys (run by :func:`parse_section`; raise :class:`Invalid`)."""
        if self.scale_min >= self.scale_max:
            raise Invalid("scale_max", f"an integer > scale_min ({self.scale_min})",
                          self.scale_max)
        if isinstance(self.slider_start, int) and not (
                self.scale_min <= self.slider_start <= self.scale_max):
            raise Invalid("slider_start", f"'random' or an integer on the scale "
                          f"{self.scale_min}..{self.scale_max}", self.slider_start)
        if not 1 <= len(self.seconds_per_item) <= 2 or sorted(self.seconds_per_item) != list(
                self.seconds_per_item):
            raise Invalid("seconds_per_item", "one positive number, or two (low, high)",
                          self.seconds_per_item)
        if self.group_size_min > self.group_size_max:
            raise Invalid("group_size_min", f"at most group_size_max ({self.group_size_max})",
                          self.group_size_min)
        if not self.texts.instructions:
            raise Invalid("texts.instructions", "at least one page", self.texts.instructions)
        for i, check in enumerate(self.checkpoints):
            if not check.before.strip():
                raise Invalid(f"checkpoints[{i}].before", f"{START!r} or a part of speech",
                              check.before)
            if len(check.options) < 2 or any(len(o) != 2 for o in check.options):
                raise Invalid(f"checkpoints[{i}].options", "two or more [word1, word2] pairs",
                              check.options)
            if not 0 <= check.answer < len(check.options):
                raise Invalid(f"checkpoints[{i}].answer", "the 0-based index of an option",
                              check.answer)
        for i, check in enumerate(self.bws.checkpoints):
            n = len(check.pairs)
            if n != self.bws.tuple_size or any(len(p) != 2 for p in check.pairs) \
                    or not (0 <= check.best < n and 0 <= check.worst < n) \
                    or check.best == check.worst:
                raise Invalid(f"bws.checkpoints[{i}]", f"tuple_size ({self.bws.tuple_size}) "
                              "[word1, word2] pairs, and different 0-based best and worst",
                              {"pairs": check.pairs, "best": check.best, "worst": check.worst})
        qual = self.qualification
        if qual is not None and (len(qual.options) < 2
                                 or not 0 <= qual.answer < len(qual.options)):
            raise Invalid("qualification", "two or more options and an answer indexing one "
                          "(0-based)", {"options": qual.options, "answer": qual.answer})
        for name in ("question", "completion_text", "screened_out_text", "progress",
                     "submit_blocked", "error_entry_link", "qualification_retry",
                     "topic_label", "consent_text", "consent_contact", "consent_ethics"):
            text = getattr(self.texts, name)
            try:
                text.format(word1="", word2="", topic="", current=1, total=1, code="", left=1,
                            parameter="", minutes="", contact="", ethics_reference="")
            except (KeyError, IndexError, ValueError) as err:
                raise Invalid(f"texts.{name}", f"the placeholders of docs/annotate.md (bad: "
                              f"{err})", text) from None
            plain = [key for _, key, spec, conversion in Formatter().parse(text)
                     if key is not None and not (key.isidentifier() and not spec and
                                                 conversion is None)]
            if plain:       # {minutes.__class__}, {total!r}, {current:>99999}: no Python here
                raise Invalid(f"texts.{name}", "plain {name} placeholders of docs/annotate.md "
                              f"(no attribute, index, conversion or format: {plain[0]!r})", text)


def load_study_config(protocol: dict | str) -> StudyConfig:
    """Parse and check the ``[study]`` table of a protocol (a dict or a name/path).

    Raises
    ------
    lexgold.protocols.ProtocolError
        Unknown key, wrong type, or an inconsistent value (naming the key).
    """
    if not isinstance(protocol, dict):
        protocol = load_protocol(protocol)
    config = parse_section(StudyConfig, protocol, "study")
    if not config.language:
        config.language = str(protocol.get("language", "en"))
    return config


def load_consent(path) -> Consent:
    """``lexgold study create --consent FILE``: the keys of ``[study.consent]`` at the top of a
    small TOML file, checked as in a protocol file (errors name the file and the key); read
    through the bounded opener (:func:`lexgold.compression.read_input_toml`)."""
    from lexgold.compression import read_input_toml

    table = read_input_toml(path, what="TOML consent file")
    return parse_section(Consent, {"study.consent": table, "_path": str(path)}, "study.consent")


def consent_paragraphs(config: StudyConfig) -> list[tuple[str, dict]]:
    """The consent page's paragraphs as (template, values) to fill (``{minutes}`` besides):
    the consent text (split at blank lines), the extra paragraphs, the contact and the ethics
    reference (each left out when not given)."""
    texts, consent = config.texts, config.consent
    out = [(text, {}) for text in texts.consent_text.split("\n\n") + list(consent.paragraphs)]
    if consent.contact:
        out.append((texts.consent_contact, {"contact": consent.contact}))
    if consent.ethics_reference:
        out.append((texts.consent_ethics, {"ethics_reference": consent.ethics_reference}))
    return out


def config_to_dict(config: StudyConfig) -> dict:
    """Plain dict (for storing the parsed design next to the study)."""
    return dataclasses.asdict(config)


def config_from_dict(data: dict) -> StudyConfig:
    """Inverse of :func:`config_to_dict` (values were checked when the study was created)."""
    data = dict(data)
    data["texts"] = Texts(**data["texts"])
    data["consent"] = Consent(**data.get("consent", {}))
    data["checkpoints"] = [Checkpoint(**c) for c in data["checkpoints"]]
    if "bws" in data:
        bws = dict(data["bws"])
        bws["checkpoints"] = [BwsCheckpoint(**c) for c in bws.get("checkpoints", [])]
        data["bws"] = BwsStudy(**bws)
    if data["qualification"] is not None:
        data["qualification"] = Qualification(**data["qualification"])
    return StudyConfig(**data)
