"""Whether a newer memory updates an older one (memstore.beliefs): ``relation``, ``later``
and ``update_signal`` over two texts' frames."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache

from .frame import Frame, Gist, _concept, _holders_agree, _people, _stem, frame, gist
from .lexicon import _I, _ONE_OFF, _ONLY_ONCE, _ROLE, _TENTATIVE


@dataclass(frozen=True, slots=True)
class Verdict:
    certain: bool  # True: supersede; False: open a conflict for a person
    rule: str  # negation | stop | cancel | replacement | value | role
    detail: str


def relation(old: str, new: str) -> Verdict | None:
    """Whether ``new`` (the later memory) updates ``old`` on the same frame, and how sure."""
    if not may_relate(old, new):
        return None
    a, b = frame(old), _fresh(frame(old), frame(new))
    if _unmarked(a, b):
        return None
    return _related(old, new, a, b)


def may_relate(old: str, new: str) -> bool:
    """Whether ``relation`` needs the two frames: not when ``new`` is tentative (a proposal,
    a question or a supposition changes no belief) or their gists refuse (``_quiet``).
    consolidate computes frames ahead only for the pairs that need them."""
    return not _tentative(new) and not _quiet(gist(old), gist(new))


def may_relate_each(olds: list[str], new: str) -> list[bool]:
    """``may_relate(old, new)`` for each of ``olds`` (``new``'s tentativeness found once)."""
    if _tentative(new):
        return [False] * len(olds)
    b = gist(new)
    return [not _quiet(gist(old), b) for old in olds]


def may_relate_any(new: str, kinds, new_gist: Gist | None = None) -> bool:
    """Whether ``may_relate(old, new)`` holds for some old text whose gist's (negated, single)
    is one of ``kinds``: False when no such pair needs a frame, so none can relate. Lets
    consolidate pass over a new record before ranking its candidates, from the kinds of the
    older records that share a key with it."""
    if _tentative(new):
        return False
    b = gist(new) if new_gist is None else new_gist  # (``new_gist``: ``gist(new)``, known)
    # (_quiet reads only the older gist's negation and single value, not its marker)
    return any(not _quiet(Gist(False, negated, single), b) for negated, single in kinds)


def _quiet(a: Gist, b: Gist) -> bool:
    """``_unmarked`` on the gists: ``b`` says no update word at all (``_fresh`` only takes
    update words away), so the frames would refuse too."""
    return not b.marked and a.negated == b.negated and not (a.single and b.single)


def _unmarked(a: Frame, b: Frame) -> bool:
    """No rule can fire: ``b`` says no update word, and neither flips a negation nor gives a
    new single value (the only rules of ``_lexical`` without a marker; every other rule of
    ``_related`` wants one). Most pairs a night compares are such chatter; the
    property test holds this to the rules (tests/test_belief_props.py)."""
    return not b.markers and a.negated == b.negated and not (a.single and b.single)


def _related(old: str, new: str, a: Frame, b: Frame) -> Verdict | None:
    """``relation`` once the cheap refusals are made (``a``, ``b``: the two frames)."""
    if ((a.recurring and _hedges(new)[1]) or _ONLY_ONCE.search(new)) and not b.markers & {"stop", "cancel", "end"}:
        return None  # "this week it's on Sunday": one occasion of the practice, not a new rule
    if not _holders_agree(a.holder, b.holder):
        return _role_holder(a, b)
    if a.times and b.times and not (a.times & b.times) and not _RESCHEDULED.search(new):
        return None  # about different times ("the Q1 review", "the Q2 review"), unless rescheduled
    verdict = _lexical(a, b)
    if verdict is not None:
        return verdict
    if a.cjk == b.cjk:
        # other words for where someone lives or works, or their number ("I live in Lyon",
        # "we moved to Toronto"): unsure, and only for one holder
        frames = a.concepts & b.concepts & _FRAME_CONCEPTS
        if frames and b.markers and "none" not in (a.holder, b.holder) and not (a.words & b.words) - _named(a):
            return Verdict(False, "value", f"in other words: new value for {sorted(frames)[0]!r}")
        return None
    # one language updates the other: only the concept list can tell, and it is never sure
    shared = a.concepts & b.concepts
    # ハッカソンは中止: a loanword the short old text is about, stopped
    loanword = (any(c.startswith("~") for c in shared) and b.markers & {"stop", "cancel"}
                and len(a.words) <= 3)
    ca, cb = _as_concepts(a), _as_concepts(b)
    if shared & _FRAME_CONCEPTS:  # where someone lives or works holds one value
        ca, cb = replace(ca, single=True), replace(cb, single=True)
    # without an update word, two texts in two languages on the same things are a translation
    v = _lexical(ca, cb) if b.markers and (len(shared) >= 2 or shared & _FRAME_CONCEPTS or loanword) else None
    if v is not None and a.cjk != b.cjk:
        return Verdict(False, v.rule, "across languages: " + v.detail)
    return None


def one_thing(old, new) -> bool:
    """Whether two records may speak of one thing at all, as far as their fields tell: one
    domain (a scope), and no two different keys nor two different subjects. Whether their
    texts speak of one holder and attribute is for ``relation`` and ``signal``."""
    if old.domain != new.domain:
        return False
    if old.key is not None and new.key is not None and old.key != new.key:
        return False
    return old.subject is None or new.subject is None or old.subject == new.subject


def later(old, new) -> bool:
    """Whether ``new`` may update ``old``: said after it (record time, then log position), and
    about a year not before the one ``old`` was said in. "The offsite is on June 12" is
    updated by "the offsite is cancelled" said in May; a note backfilled to 2025
    (--occurred-at, or "in 2025" in its text) is old news and updates nothing said in 2026."""
    if (new.recorded_at, new.seq, new.id) <= (old.recorded_at, old.seq, old.id):
        return False
    # compared by the year only: a date in the text is often what the belief is about (a
    # birthday, a deadline), not when it was learnt
    return new.occurred_at[:4] >= old.recorded_at[:4]


def _identifier(value: str) -> bool:
    """A value that names one thing (v4.2, us-east-1), not a number or a day shared by many."""
    return any(c.isdigit() for c in value) and not value.isdigit()


def _fresh(a: Frame, b: Frame) -> Frame:
    """``b`` with only the update words ``a`` does not say too: "Bumped X in PR #152" and
    "Bumped X in PR #178" are the same sentence about two events, not an update."""
    if not b.said & a.said:
        return b
    return replace(b, markers=frozenset(sort for sort, word in b.said - a.said))


def update_signal(old: str, new: str) -> bool:
    """Whether ``new`` reads as an update of ``old`` were the two on the same thing (the caller
    decides that, e.g. by embedder cosine): the same holder and time, words or concepts in
    common, and in ``new`` a flipped negation, a stop, a cancellation, a replacement, or a
    different value with an update word. A restatement with only "updated" or "now" in it
    does not count: "Eng handbook updated: no deploys on Fridays" restates "Never deploy on
    Fridays"."""
    return signal(old, new) == "update"


def change_signal(old: str, new: str) -> bool:
    """A weaker ``update_signal`` for two memories the embedder puts on one topic: nothing in
    ``new`` says that the old belief still holds (a restatement, a proposal or a question, an
    addition, one occasion of a practice, another thing of the same sort, another holder or
    time). Recall only orders such a pair newer first."""
    return signal(old, new) is not None


def signal(old: str, new: str) -> str | None:
    """"update" where ``update_signal`` holds, else "change" where ``change_signal`` does, else None."""
    a, b = frame(old), _fresh(frame(old), frame(new))
    if not _same_holder(a, b) or (a.times and b.times and not (a.times & b.times)):
        return None
    holds, once = _hedges(new)
    if holds or b.also:
        return None  # said again, proposed or supposed, or added to: the old belief holds
    if (a.recurring and once) or _ONLY_ONCE.search(new):
        return None  # "trash is a day late this week", 「来週の水曜だけ」: one occasion, not a new rule
    # a new value of the same sort: "OPS-1423" is not replaced by "70%"
    values_differ = bool(a.values and b.values and a.values != b.values
                         and {_sort(v) for v in a.values} & {_sort(v) for v in b.values})
    if a.cjk != b.cjk and not (a.words & b.words or a.concepts & b.concepts):
        return "change"  # two languages share no word: the caller's cosine is all there is
    shared = _matching(a.words, b.words)
    if not (shared or a.concepts & b.concepts):
        return None  # nothing in common to update: a neighbour, not a new version
    if _other_subject(a, b):
        return None  # "the staging cluster …", "the analytics cluster …": another thing of one sort
    if a.cjk != b.cjk:
        return "change"  # across languages only the concept list links words: never sure
    if len(shared) == 1 and not a.concepts & b.concepts and min(len(a.words), len(b.words)) > 3:
        return "change"  # one shared word between longer statements may be a topic, not a frame
    # (a flipped negation alone is not enough for an update: "Friday deploys are off-limits"
    # restates "never deploy on Fridays"; the rules of relation() look at what it governs)
    if b.markers & {"stop", "cancel", "replace"} or (b.markers and (values_differ or a.negated != b.negated)):
        return "update"
    return "change"


def about(old: str, new: str) -> bool:
    """Whether ``new`` names what ``old`` is about and something it says of it: a word of its
    subject (``Frame.topic``; when the subject is its holder, 娘は水泳を習っている, a word of
    what it says of them) and another of its words. One shared word names a topic, not a
    statement (オンコール手当 is not the on-call rotation; the Redis client is not the cluster)."""
    a = frame(old)
    holder = _named(a)
    words = frame(new).words - holder
    topic = set(a.topic) - holder or (a.words - holder if a.topic else set())
    return bool(_matching(topic, words)) and len(_matching(a.words - holder, words)) >= 2


def _named(f: Frame) -> set[str]:
    """The words that name the holder: "sister" and "hannah" in "My sister Hannah lives in Portland"."""
    rel, names = _people(f.holder)
    return {_stem(w) for w in names | ({rel} if rel else set())}


def _sort(value: str) -> str:
    """A value's sort: an identifier (build-ci-02, v4.2), a number or time (1850, 9:30), a word."""
    if not any(c.isdigit() for c in value):
        return "word"
    return "id" if value.isascii() and any(c.isalpha() for c in value) else "number"


@lru_cache(maxsize=65536)
def _hedges(text: str) -> tuple[bool, bool]:
    """(the text says a belief still holds, or only proposes or supposes; it names one
    occasion): per text, as recall compares each candidate with many."""
    return bool(_STILL.search(text) or _tentative(text)), bool(_ONE_OFF.search(text))


@lru_cache(maxsize=65536)
def _tentative(text: str) -> bool:
    return bool(_TENTATIVE.search(text))


def same_holder(old: str, new: str) -> bool:
    """Whether two texts speak of one holder (``_same_holder`` of their frames): "Bob is
    allergic to peanuts" and 「エミさんはそばアレルギー」 are two people's."""
    return _same_holder(frame(old), frame(new))


def _same_holder(a: Frame, b: Frame) -> bool:
    """The holders agree, or the one the old text names is named in the new one too ("Jenna
    took over as on-call lead, Marcus moved to ML infra"; "Allergist did the test: Theo is …")."""
    if _holders_agree(a.holder, b.holder):
        return True
    # (not "木村さんの後輩の森さん": a relation of the one named is someone else)
    return b.holder.startswith("name:") and bool(_names(a)) and _names(a) <= _matching(b.words, a.words)


def _other_subject(a: Frame, b: Frame) -> bool:
    """Whether the two subjects name one sort of thing but each with a word the other text
    does not say: the staging cluster and the analytics cluster, 本番DBのバックアップ and
    検証DBのバックアップ, 会議室A and 会議室C (the sort: the last word that is not a label)."""
    if a.cjk != b.cjk or not (a.topic and b.topic):
        return False
    head = lambda topic: next((w for w in reversed(topic) if len(w) > 1), "")  # noqa: E731
    if not _matching({head(a.topic)} - {""}, {head(b.topic)}):
        return False  # 社内チャット and 社内のやり取り: two names for one thing, not two things
    return bool(set(a.topic) - _matching(a.topic, b.words)) and bool(set(b.topic) - _matching(b.topic, a.words))


# Words that say a belief still holds: said again, not changed.
_STILL = re.compile(r"\b(?:still|again|as before|as usual|continues?|confirmed|reminded|reiterated|"
                    r"remains?|stays?|keeps?)\b|引き続き|相変わらず|改めて|再確認|変わらず", _I)


_RESCHEDULED = re.compile(r"\b(?:reschedul\w*|moved|postponed|pushed|changed|correction|wrong|not)\b|"
                          r"変更|延期|訂正|間違|勘違い|正しくは|ではなく|じゃなく", _I)


def _names(f: Frame) -> set[str]:
    return {_stem(n) for n in f.holder[5:].split(",")} if f.holder.startswith("name:") else set()


def _role_holder(a: Frame, b: Frame) -> Verdict | None:
    """Someone else now holds the role, the speaker included ("班長は私" then "田中さんに交代",
    "Priya took over as on-call lead from me"): the texts differ only in who holds it, once
    the names and the speaker's own words are set aside, or one says less of the role than
    the other (a time it held, a team)."""
    people = ("name:", "rel:", "self")
    if not (a.role and b.role and b.markers and a.holder.startswith(people) and b.holder.startswith(people)):
        return None
    rest_a, rest_b = a.words - _holder_words(a) - _SPEAKER, b.words - _holder_words(b) - _SPEAKER
    if not rest_a or not rest_b:
        return None
    if rest_a == rest_b:
        return Verdict(True, "role", f"new holder of {' '.join(sorted(rest_a))!r}")
    shared = rest_a & rest_b
    if (rest_a <= rest_b or rest_b <= rest_a) and any(_ROLE.search(w) for w in shared):
        return Verdict(False, "role", f"new holder of {' '.join(sorted(shared))!r}?")
    return None


def _holder_words(f: Frame) -> set[str]:
    """The words that say who holds it: names (Tanaka-san too), and a relative's word."""
    names = _names(f) | (_named(f) if f.holder.startswith("rel:") else set())
    return names | {w for w in f.words if w.partition("-")[0] in names}


# the speaker's own words that a frame keeps as content (English ones are stop words)
_SPEAKER = frozenset({"私", "僕", "俺", "わたし", "自分"})


def _as_concepts(f: Frame) -> Frame:
    numbers = frozenset(v for v in f.values if v[:1].isdigit())  # 980 is 980 in both languages
    return Frame(f.concepts, (), numbers, f.concepts, f.concepts if f.negated else frozenset(),
                 (f.concepts,), f.negated, f.markers, f.said, frozenset(), f.holder, f.times, f.single, f.role,
                 f.recurring, f.also, f.cjk)


# Concepts that frame a statement on their own: where someone lives, where they work.
_FRAME_CONCEPTS = frozenset({"住", "勤", "電話"})


def _slots(f: Frame, only: frozenset[str], shared: frozenset[str], *, near_shared: bool) -> int:
    """How many separate places the words of ``only`` fill in ``f``'s text: runs of them in
    text order. ``near_shared``: count only in the clauses that hold a shared word (a new
    text may add a reason after a comma)."""
    clauses = {c for w, c in f.order if w in shared} if near_shared else None
    runs, inside, length = 0, False, 0
    for w, c in f.order:
        if clauses is not None and c not in clauses:
            inside = False
            continue
        if w in only:
            length = length + 1 if inside else 1
            runs += not inside or length == 4  # a value is a few words, not a clause
            inside = True
        else:  # a shared word or a value ends a run
            inside = False
    return runs


def _matching(xs, ys, *, loose: bool = False) -> frozenset[str]:
    """The words of ``xs`` that a word of ``ys`` matches: the same word, or for Japanese runs
    (never segmented into words) one of two or more characters inside the other (デザイン in
    デザインチーム); ``loose`` also lets one character end the other (辛 in 中辛, 飲 in 一切飲)."""
    out = set(xs) & set(ys)
    for x in set(xs) - out:
        if not x.isascii() and any(not y.isascii() and _inside(x, y, loose) for y in ys):
            out.add(x)
    return frozenset(out)


def _inside(x: str, y: str, loose: bool) -> bool:
    short, long = (x, y) if len(x) <= len(y) else (y, x)
    if len(short) >= 2:
        return short in long
    return loose and long.endswith(short)


def _lexical(a: Frame, b: Frame) -> Verdict | None:
    shared, shared_b = _matching(a.words, b.words), _matching(b.words, a.words)
    ids = {v for v in a.values & b.values if _identifier(v)}  # 4.2, us-east-1
    if not a.words or not b.words or not (shared or a.concepts & b.concepts or ids):
        return None
    only_a, only_b = a.words - shared, b.words - shared_b
    share = len(shared) / min(len(a.words), len(b.words))
    word = sorted(shared)[0] if shared else ""
    if a.negated != b.negated:
        # a negated restatement of the same thing: what the negator governs is in the other text
        scope = b.scope if b.negated else a.scope
        other = a.words if b.negated else b.words
        inside = _matching(scope, other, loose=True)
        extra = scope - inside
        # one shared word between two longer texts is a topic, not the same statement
        # ("Grace drinks green tea, never coffee" and "the coffee machine is descaled")
        frame_shared = bool(shared) and (len(shared) >= 2 or min(len(a.words), len(b.words)) <= 2)
        verb_stem = len(extra) == 1 and len(next(iter(extra))) == 1  # 使 in 使ってない
        if frame_shared and inside and (not extra or verb_stem):
            sure = bool(b.markers) or len(inside) >= 2
            return Verdict(sure, "negation", f"negation flips on {sorted(inside)[0]!r}")
        if not b.markers & {"stop", "cancel", "replace", "end"}:
            return None
    if "end" in b.markers and a.recurring:
        b = replace(b, markers=b.markers | {"stop"})
    if b.markers & {"stop", "cancel"}:
        # what is stopped is the old thing: most of what the stop word governs is in the old text
        named = a.holder == b.holder and a.holder.startswith("name:")  # about one person
        for part in b.stopped:  # what each stop word governs
            hit = _matching(part, a.words) | {v for v in part & a.values if _identifier(v)}  # 4.2, not 5 or tue
            # ランニングはやめた after 毎朝走っている: the concept stopped is one the old text holds
            # (all of what is stopped: "the team offsite" is not the team lunch)
            same = {w for w in part - hit if (c := _concept(w)) is not None and c in a.concepts}
            if same and hit | same == part:
                hit |= same
            if a.topic and part - hit and not hit & set(a.topic):
                continue  # "stopped the morning runs" does not stop what "the warranty runs" says
            if part - hit and not hit - _named(a):
                continue  # the holder's word names who, not what is stopped: 娘は英語塾を辞めた
                # does not stop 娘の靴のサイズは19cm (渡辺さんとの定例1on1は取りやめ stops the 1on1)
            # most of what is stopped is in the old text, and it is much of what the old text says
            # (half of it, when each text also names a thing the other does not, is two
            # things of one sort: "postponed latency for deploys" stops nothing "decided on
            # latency for billing" said; a practice's stop names its time: "the evening runs")
            if (len(hit) * 2 == len(part) and not a.recurring and not named
                    and a.words - _matching(a.words, b.words) - _named(a)):
                continue
            if hit and len(hit) * 2 >= len(part) and (len(hit) * 3 >= len(a.words) or named):
                sort = "cancel" if "cancel" in b.markers else "stop"
                return Verdict(True, sort, f"{sort} of {sorted(hit)[0]!r}")
    gone = _matching(b.replaced, a.words) | (b.replaced & a.values)
    # a value alone links the two when they share a word, when the newer says nothing else, or
    # when it is the day of a date the older names ("due on May 12" / "the 15th, not the
    # 12th"); 「資源ごみ、水曜じゃなくて木曜」 is not about 「祖父の通院は毎月第2水曜」
    dated = {v for t in a.times for v in t.split()}
    by_value = bool(gone & a.values) and (bool(shared) or not b.words or bool(gone & dated))
    if "replace" in b.markers and gone and not (b.replaced & only_b) and (
            len(gone) * 4 >= len(a.words | a.values) or by_value):
        return Verdict(True, "replacement", f"{sorted(gone)[0]!r} replaced")
    if a.negated != b.negated or not shared:
        return None
    if a.role and b.role and b.markers and a.holder == b.holder and a.holder.startswith("name:"):
        return Verdict(True, "role", f"new role for {a.holder[5:]!r}")
    if b.also or share < 0.5:
        return None  # a second value that adds to the first, or a different statement
    values_differ = bool(a.values) and bool(b.values) and a.values != b.values
    if not (values_differ or (only_a and only_b)):
        return None  # a restatement or an extension
    if len(shared) == 1 and max(len(a.words), len(b.words)) > 3:
        return None  # one shared word between longer statements is a topic, not a frame
    if values_differ and only_a and only_b:
        return None  # a value and a word both differ: another event of the same sort (a quote to
        # another customer, another PR), not a new value for the same statement
    slots_a = _slots(a, only_a, shared, near_shared=False)
    slots_b = _slots(b, only_b, shared_b, near_shared=True)
    if slots_b > 1 or (slots_a > 1 and slots_b):
        return None  # more than one place differs: another statement on the same words
    if b.markers and (values_differ or (a.single and b.single)):  # a value, not other words
        return Verdict(True, "value", f"new value for {word!r}")
    if a.single and b.single and (len(shared) >= 2 or a.holder == b.holder != "none"):
        return Verdict(share >= 0.66 and len(shared) >= 2, "value", f"one value for {word!r}")
    return None
