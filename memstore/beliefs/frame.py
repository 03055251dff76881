"""What a text says, for comparing it with another (memstore.beliefs): ``frame(text)``
breaks it into content words and values, update words, what a negator or a stop word
governs, its holder and explicit times. Pure and cached."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from ..cjk import CJK
from .lexicon import (
    _ABBREVIATIONS,
    _ALSO,
    _APPOSITION,
    _BEING,
    _CLAUSE,
    _COMMON_START,
    _CONCEPT_PHRASES,
    _CONCEPTS,
    _CONTRACTION,
    _CONTRAST,
    _DETERMINERS,
    _EN_NEG,
    _EN_SCOPE,
    _EN_SCOPED,
    _EN_SOUND,
    _EN_VERB,
    _EXPLICIT_TIME,
    _HIRA_NOUN,
    _HIRA_STOP,
    _HONORIFIC,
    _INTERJECTION,
    _JA_COUNTERS,
    _JA_JOBS,
    _JA_NAME,
    _JA_NEG,
    _JA_REL,
    _JA_SCOPE,
    _JA_TOPIC,
    _JA_VALUE,
    _KANA,
    _KANJI_KATA,
    _MARKERS,
    _MINE,
    _MODEL_YEAR,
    _NAME_START,
    _NOT_PREFIX,
    _NUMBER,
    _PARTICLE,
    _PASSIVE,
    _PLACES,
    _POSSESSIVE,
    _PRONOUNS,
    _RECIPIENT,
    _RECURRING,
    _REL,
    _RELATIVE_YEAR,
    _REPLACE_OBJ,
    _ROLE,
    _SELF,
    _SENTENCE,
    _SINGLE,
    _SMALL,
    _STOP,
    _TIME_WORDS,
    _VALUE_WORDS,
    _WEEKDAYS,
    _WORD,
    _YEAR_OFFSET,
)


@dataclass(frozen=True, slots=True)
class Frame:
    """What a text says, for comparing it with another: content words (stemmed) apart from
    values (numbers, days, months), their bilingual concepts, what a negator governs, the
    negation parity, update-word sorts, holder and explicit times."""

    words: frozenset[str]
    order: tuple[tuple[str, int], ...]  # (word, clause) in text order, for counting slots
    values: frozenset[str]
    concepts: frozenset[str]
    scope: frozenset[str]  # words under a negator
    stopped: tuple[frozenset[str], ...]  # what a stop or cancel word may govern, nearest first
    negated: bool
    markers: frozenset[str]  # "stop", "cancel", "replace", "change", "end"
    said: frozenset[tuple[str, str]]  # (sort, the update words as written)
    replaced: frozenset[str]  # words of the thing a "replace X with Y" / "from X to Y" names
    holder: str  # "self", "none", "rel:<word>", "name:<words>"
    times: frozenset[str]
    single: bool  # a single-valued frame word appears
    role: bool  # a role word appears
    recurring: bool  # a practice ("every Friday", 毎週), which an end ("ended", 終了) stops
    also: bool
    cjk: bool
    topic: tuple[str, ...] = ()  # content words of the first clause's subject, in text order


# words repeat across texts: the per-word analyses are cached (pure functions of the word)
_WORDS = 1 << 17


@lru_cache(maxsize=_WORDS)
def _stem(w: str) -> str:
    if not w.isascii() or any(c.isdigit() for c in w):
        return w
    w = w.replace("’", "'")
    if w.endswith("'s"):
        w = w[:-2]
    w = _ABBREVIATIONS.get(w, w)
    for suffix in ("ing", "ies", "ed", "es", "s", "e", "y"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[: -len(suffix)]
            if (suffix in ("ing", "ed") and len(w) >= 4 and w[-1] == w[-2] and w[-1] not in "aeiouylsz"
                    and w[-3] in "aeiou" and w[-4] not in "aeiou"):
                w = w[:-1]  # running and runs, stopped and stop (not added, falling)
            return w
    return w


@lru_cache(maxsize=_WORDS)
def _value(w: str) -> str | None:
    """The canonical form of a value word ($1,850 -> 1850; 12th -> 12), else None."""
    if w.isascii() and any(c.isdigit() for c in w) and any(c.isalpha() for c in w) and not _NUMBER.match(w):
        return w.casefold()  # an identifier (pinecone42, us-east-1, v4.2): a value, not a word
    if _NUMBER.match(w):
        return re.sub(r"(?<=\d)(?:st|nd|rd|th)$|[$¥€£,]", "", w.casefold())
    low = w.casefold()
    if low in _VALUE_WORDS or (low.endswith("s") and low[:-1] in _WEEKDAYS) or _JA_VALUE.match(w):
        return low[:3] if w.isascii() else w.removeprefix("毎週")[:2]  # Tuesdays is tue
    return None


# The version of ``keys``' rule: the key cache (memstore.nightcache.keycache) keeps keys under
# it, so a changed rule never reads another's keys. tests/test_keycache.py pins the rule's
# output to it: change the rule, then this.
KEYS_VERSION = 2


def keys_of(texts: list[str]) -> list[frozenset[str]]:
    return [keys(t) for t in texts]


@lru_cache(maxsize=65536)
def keys(text: str) -> frozenset[str]:
    """Cheap lookup keys of a text (a tenth of ``frame``'s cost): its content words, their
    concepts, and the pairs of its longer Japanese runs. Two texts ``relation`` may link
    share a key (words, a concept, a loanword's consonants, or a Japanese run's pair; beliefs
    matches デザイン in デザインチーム), so consolidate compares a new memory only with those."""
    t = unicodedata.normalize("NFKC", text)
    found = set()
    for w in _content_words(t):
        found.add(_value(w) or _stem(w))
        if (c := _concept(w)) is not None:
            found.add("\x00" + c)
        if (k := _sound(_stem(w))) is not None:  # a loanword in either script (hackathon, ハッカソン)
            found.add("\x00" + k)
        if not w.isascii() and len(w) > 2:
            found.update(w[i:i + 2] for i in range(len(w) - 1))
    found.update("\x00" + c for pattern, c in _CONCEPT_PHRASES if pattern.search(t))
    return frozenset(found)


def _content_words(text: str) -> list[str]:
    words = []
    for m in _WORD.finditer(text):
        tok = m.group()
        low = _CONTRACTION.sub("", tok.casefold())
        if not low:
            continue
        if low[0].isascii():
            if len(tok) == 1 and tok.isupper() and text[:m.start()].rstrip()[-1:] not in ("", ".", "!", "?", ":"):
                words.append(low)  # mid-sentence, a capital is a label (会議室A, Room A), not the article
                continue
            if low in _STOP or len(low) < 2 and not low.isdigit():
                continue
            words.append(low)
        else:
            words.extend(m.group(1) for m in _HIRA_NOUN.finditer(tok) if m.group(1) not in _HIRA_STOP)
            for run in _KANJI_KATA.findall(tok):  # hiragana carries grammar, not content
                if run in _JA_COUNTERS:
                    continue
                words.append(run)
    return words


def _split(words) -> tuple[frozenset[str], frozenset[str]]:
    frame_words, values = set(), set()
    for w in words:
        v = _value(w) or (_CONCEPTS.get(w.casefold()) if _CONCEPTS.get(w.casefold()) in _PLACES else None)
        if v is not None:
            values.add(v)
        elif not _EXPLICIT_TIME.fullmatch(w):
            frame_words.add(_stem(w))
    return frozenset(frame_words), frozenset(values)


_SEEDED: dict[str, Frame] = {}  # frames computed ahead, e.g. on consolidate's workers


def seed(texts: list[str], frames: list[Frame]) -> None:
    """Remember frames computed elsewhere (``frames_of`` on worker processes): ``frame``
    returns them as it would have computed them. A cache, not state."""
    if len(_SEEDED) > 400_000:
        _SEEDED.clear()
    _SEEDED.update(zip(texts, frames, strict=True))


def unseeded(texts) -> list[str]:
    """Those of ``texts`` whose frames were not seeded, sorted."""
    return sorted(t for t in texts if t not in _SEEDED)


def frames_of(texts: list[str]) -> list[Frame]:
    return [frame(t) for t in texts]


def frame(text: str) -> Frame:
    found = _SEEDED.get(text)
    return found if found is not None else _frame(text)


def _forget_frames() -> None:
    _frame.cache_clear()
    _gist.cache_clear()
    _SEEDED.clear()
    _GISTS.clear()


frame.cache_clear = _forget_frames  # as lru_cache's: the analysis again from the text


@lru_cache(maxsize=65536)
def _frame(text: str) -> Frame:
    t = unicodedata.normalize("NFKC", text)
    markers = set()
    said = set()
    spans = []
    for sort, pattern in _MARKERS:
        for m in pattern.finditer(t):
            markers.add(sort)
            said.add((sort, " ".join(m.group().casefold().split())))
            spans.append(m.span())
    contrast = [m.span() for m in _CONTRAST.finditer(t)]
    if contrast:
        markers.add("replace")  # "the 15th, not the 12th": a correction
        said.add(("replace", "not"))
    plain, first, negated = _statement(t, contrast)
    replaced: set[str] = set()
    for m in _REPLACE_OBJ.finditer(t):
        given = m.group("given") or m.group("passed") or m.group("drawer")
        obj = m.group("obj") or m.group("source") or m.group("ja") or given or ""
        replaced.update(_value(w) or _stem(w) for w in _content_words(obj))
        if given:
            markers.add("replace")  # "traded in the Golf", "the Pixel's in a drawer now"
    for start, end in contrast:  # "the 15th, not the 12th": the 12th is what is replaced
        replaced.update(_value(w) or _stem(w) for w in _content_words(_NOT_PREFIX.sub(" ", t[start:end])))
    scope = set()  # the negated clause: its subject and what the negator governs
    for m in _EN_SCOPE.finditer(first) if _EN_SCOPED.search(first) else ():
        clause = m.group(1) + " " + m.group(2)
        scope |= _split(_content_words(_strip(clause, _marker_spans(clause) + _time_spans(clause))))[0]
    for m in _JA_SCOPE.finditer(first):
        scope |= _split(_content_words(_strip(m.group(1), _marker_spans(m.group(1)))))[0]
    stopped = []  # what a stop word may govern: the words after it, before it, the clause before
    for sort, pattern in _MARKERS:
        if sort in ("stop", "cancel", "end"):
            for m in pattern.finditer(t):
                start = max((c.end() for c in _CLAUSE.finditer(t, 0, m.start())), default=0)
                end = next((c.start() for c in _CLAUSE.finditer(t, m.end())), len(t))
                before = max((c.end() for c in _CLAUSE.finditer(t, 0, max(start - 1, 0))), default=0)
                if _concept(m.group()) is not None:  # 禁煙: the stop word names what it stops
                    stopped.append(frozenset({m.group()}))
                    continue
                parts = [t[m.end():end], t[start:m.start()], t[before:start]]
                if not m.group()[:1].isascii() or _PASSIVE.search(t[start:m.start()]):
                    parts[:2] = parts[1::-1]  # 「ジムはやめた」, "4.2 is scrapped": the thing comes first
                for part in parts:
                    found = _split(_content_words(_strip(part, _marker_spans(part) + _time_spans(part))))
                    if found[0] or found[1]:
                        stopped.append(found[0] | found[1])
                        break
    times = frozenset([*(_time_key(x) for x in _EXPLICIT_TIME.findall(_MODEL_YEAR.sub(r"\1", t))),
                       *("year" + _YEAR_OFFSET[(m.group(1) or m.group(2)).casefold()] for m in _RELATIVE_YEAR.finditer(t))])
    stripped = _strip(t, spans + contrast + [m.span() for m in _TIME_WORDS.finditer(t)]
                      + [m.span() for m in _EN_NEG.finditer(t)] + [m.span() for m in _JA_NEG.finditer(t)])
    raw = _content_words(stripped)
    words, values = _split(raw)
    order = tuple((_stem(w) if _value(w) is None else "\x00", n)
                  for n, clause in enumerate(_CLAUSE.split(stripped)) for w in _content_words(clause))
    # concepts come from every word, update words included: 引っ越した says where one lives
    concepts = frozenset([c for w in raw + _content_words(t) if (c := _concept(w)) is not None]
                         + [c for pattern, c in _CONCEPT_PHRASES if pattern.search(t)]
                         + [k for w in raw if (k := _sound(_stem(w))) is not None])
    return Frame(words, order, values, concepts, frozenset(scope), tuple(stopped), negated, frozenset(markers),
                 frozenset(said),
                 frozenset(replaced), _holder(t), times, bool(_SINGLE.search(t)), bool(_ROLE.search(t)),
                 bool(_RECURRING.search(t)),
                 bool(_ALSO.search(t)), bool(CJK.search(t)), _topic(plain))


def _statement(t: str, contrast: list[tuple[int, int]]) -> tuple[str, str, bool]:
    """``t`` without its corrections and interjections ("the 15th, not the 12th", "no, …"),
    its first sentence, and whether that sentence is negated: the statement comes first, and
    a reason after it ("..., it was wrecking my sleep", 「…合わなくなって」) does not flip it."""
    plain = _strip(t, contrast + [m.span() for m in _INTERJECTION.finditer(t)])
    first = _SENTENCE.split(plain.strip(), 1)[0]
    return plain, first, (len(_EN_NEG.findall(first)) + len(_JA_NEG.findall(first))) % 2 == 1


@dataclass(frozen=True, slots=True)
class Gist:
    """The three things of a frame that tell most pairs apart without the rest (rules'
    cheap refusal): whether the text says an update word (``bool(frame.markers)``), its
    negation and whether it says a single-valued frame word; a fifth of ``frame``'s cost."""

    marked: bool
    negated: bool
    single: bool


_GISTS: dict[str, Gist] = {}  # gists computed ahead (consolidate's workers), as _SEEDED


def gist(text: str) -> Gist:
    """``frame(text)``'s markers (whether any), negation and single, computed alone."""
    found = _GISTS.get(text)
    if found is None:
        f = _SEEDED.get(text)
        found = Gist(bool(f.markers), f.negated, f.single) if f is not None else _gist(text)
    return found


def gists_of(texts: list[str]) -> list[Gist]:
    return [gist(t) for t in texts]


def seed_gists(texts: list[str], gists: list[Gist]) -> None:
    """As ``seed``, for gists."""
    if len(_GISTS) > 400_000:
        _GISTS.clear()
    _GISTS.update(zip(texts, gists, strict=True))


def ungisted(texts) -> list[str]:
    """Those of ``texts`` whose gists (or frames) were not seeded, sorted."""
    return sorted(t for t in texts if t not in _GISTS and t not in _SEEDED)


@lru_cache(maxsize=65536)
def _gist(text: str) -> Gist:
    # as _frame finds them: markers by any update word, a correction or a "given" object
    t = unicodedata.normalize("NFKC", text)
    contrast = [m.span() for m in _CONTRAST.finditer(t)]
    marked = bool(contrast) or any(p.search(t) for _sort, p in _MARKERS) or any(
        m.group("given") or m.group("passed") or m.group("drawer") for m in _REPLACE_OBJ.finditer(t))
    return Gist(marked, _statement(t, contrast)[2], bool(_SINGLE.search(t)))


def _topic(text: str) -> tuple[str, ...]:
    """The stemmed content words of the first clause's subject: the words before its first
    verb ("The staging cluster" has 3 nodes), or before 「は」「が」 (会議室Aは…). A pronoun's
    statement is about the thing it acts on ("we scaled the analytics cluster down")."""
    clause = _CLAUSE.split(text.strip(), 1)[0]
    if CJK.search(clause):
        # 「来月から管理費が」: a time word and its particle are when, not what the text is about
        clause = re.sub(r"^\s*(?:から|より|以降|まで|に|の|は|、)?\s*", "", _strip(clause, _time_spans(clause)))
        m = _JA_TOPIC.match(clause)
        return _ordered(m.group(1) if m else "")
    tokens = _strip(clause, _marker_spans(clause) + _time_spans(clause)).split()  # "anymore", "every day"
    low = [w.strip("'\"").casefold() for w in tokens]
    verb = next((i for i, w in enumerate(low) if i and _EN_VERB.match(w)), 0)
    if low and low[0] in _PRONOUNS:
        verb = 1
    subject = _ordered(" ".join(tokens[:verb]))
    if subject or not verb:
        return subject
    i = verb
    while i < len(low) and (_EN_VERB.match(low[i]) or _EN_NEG.fullmatch(low[i])):
        i += 1  # "don't", "have": the verb is still to come
    if i < len(low) and low[i] not in _DETERMINERS:
        i += 1  # the verb itself
    while i < len(low) and low[i] in _DETERMINERS:
        i += 1
    stop = next((j for j in range(i, len(low)) if _PARTICLE.match(low[j]) or low[j][:1].isdigit()), len(low))
    return _ordered(" ".join(tokens[i:stop]))


def _ordered(text: str) -> tuple[str, ...]:
    """The stemmed content words of ``text`` that are not values, once each, in text order."""
    found = _content_words(text)
    words = _split(found)[0]
    return tuple(dict.fromkeys(w for w in map(_stem, found) if w in words))


def _time_spans(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in _TIME_WORDS.finditer(text)]


_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")


def _time_key(text: str) -> str:
    """One spelling per explicit time: "July 18th", "jul. 18" and 「7月18日」 are "jul 18"."""
    if m := re.fullmatch(r"(\d{1,2})月(\d{1,2})日", text):
        if 1 <= int(m.group(1)) <= 12:
            return f"{_MONTHS[int(m.group(1)) - 1]} {int(m.group(2))}"
    words = text.casefold().replace(".", " ").split()
    if len(words) == 2 and words[0].isalpha():
        return f"{words[0][:3]} {re.sub(r'(?<=[0-9])(?:st|nd|rd|th)$', '', words[1])}"
    return " ".join(words)


def _marker_spans(text: str) -> list[tuple[int, int]]:
    return [m.span() for _sort, p in _MARKERS for m in p.finditer(text)]


@lru_cache(maxsize=_WORDS)
def _concept(word: str) -> str | None:
    low = word.casefold()
    if low in _CONCEPTS:
        return _CONCEPTS[low]
    if not low.isascii():  # a Japanese run holding a listed word (東京に -> 東京)
        for key in (low[:i] for i in range(len(low), 0, -1)):
            if key in _CONCEPTS:
                return _CONCEPTS[key]
    return None


def _strip(text: str, spans) -> str:
    out, pos = [], 0
    for start, end in sorted(spans):
        if start > pos:
            out.append(text[pos:start])
        pos = max(pos, end)
        out.append(" ")
    out.append(text[pos:])
    return "".join(out)


def _holder(text: str) -> str:
    # "passed the Garmin on to my brother": a relative after a preposition is not who the text
    # is about ("my sister's flat", "my sister moved" are)
    rel = next((m for m in _REL.finditer(text) if not _RECIPIENT.search(text, 0, m.start())), None) \
        or _JA_REL.search(text)
    if rel:
        named = _APPOSITION.match(text, rel.end()) if rel.re is _REL else None
        if named and named.group(1).casefold() not in _COMMON_START:
            return f"rel:{rel.group(1).casefold()}={named.group(1).casefold()}"  # my sister Hannah
        return "rel:" + rel.group(1).casefold()
    names = {m.group(1).casefold() for m in _JA_NAME.finditer(text) if m.group(1) not in _JA_JOBS}
    names |= {m.group(1).casefold() for m in _HONORIFIC.finditer(text)}
    names |= {m.group(1).casefold() for m in _POSSESSIVE.finditer(text)
              if m.group(1).casefold() not in _COMMON_START}
    first = _NAME_START.match(text)
    if (first and first.group(1).casefold() not in _COMMON_START and not first.group(1).endswith("ly")
            and not (names or (not _BEING.match(text, first.end(1)) and _MINE.match(text, first.end())))):
        # (not "Doctor changed my meds", "Allergist did the test: Theo is …": a capital that
        # starts the text is a name only when it is the one the text is about)
        names.add(first.group(1).casefold())
    if names:
        return "name:" + ",".join(sorted(names))
    if _SELF.search(text):
        return "self"
    return "none"


def _holders_agree(a: str, b: str) -> bool:
    if a == b or "none" in (a, b):
        return True
    (ra, x), (rb, y) = _people(a), _people(b)
    if ra is not None and ra == rb:
        return True  # "my sister" and "my sister Hannah"
    return bool({_romaji(n) for n in x} & {_romaji(n) for n in y})  # Ken is ケン; my sister Hannah is Hannah


def _people(holder: str) -> tuple[str | None, set[str]]:
    """(the relation, the names) a holder says: "rel:sister=hannah" -> ("sister", {"hannah"})."""
    sort, _, rest = holder.partition(":")
    if sort == "name":
        return None, set(rest.split(","))
    if sort == "rel":
        rel, _, name = rest.partition("=")
        return rel, {name} if name else set()
    return None, set()


@lru_cache(maxsize=_WORDS)
def _sound(word: str) -> str | None:
    """A loanword's consonant skeleton ("~hksn" for hackathon and ハッカソン), or None for words
    too short to tell apart (fewer than three consonants) and for kanji."""
    if re.fullmatch(r"[\u30a0-\u30ffー]+", word):
        roman = _romaji(word).replace("h", "")
    elif re.fullmatch(r"[a-z]{5,}", word):  # shorter words collide (long, ランニング)
        roman = word
        for a, b in _EN_SOUND:
            roman = roman.replace(a, b)
    else:
        return None
    skeleton = re.sub(r"(.)\1+", r"\1", re.sub(r"[aeiou]", "", roman))
    return "~" + skeleton if len(skeleton) >= 3 else None


def _romaji(name: str) -> str:
    if not re.fullmatch(r"[\u30a0-\u30ff]+", name):
        return name.casefold()
    out = ""
    double = False
    for ch in name:
        if ch == "ッ":
            double = True
            continue
        if ch in _SMALL and out:
            out = out[:-1] + _SMALL[ch] if ch in "ャュョ" else out[:-1] + _SMALL[ch]
            continue
        part = _KANA.get(ch, "")
        if double and part:
            part = part[0] + part
            double = False
        out += part
    return out
