"""Weekly distillation as a pure function: ``distill(state, now=, config=) -> events``.

Forgetting that never deletes (memstore(7), DISTILLATION): a long-term active record whose effective
salience at ``now`` is under ``distill.floor`` (and that is not protected, not yet
abstracted, and not created in this run) climbs one rung of the ladder

    raw -> summary -> pattern -> principle -> policy

as a NEW derived record (op ``distill``, ``derived_from`` = its sources); the
sources stay as evidence and get ``abstracted_by`` so recall prefers the
abstraction. Rungs (all extractive, memstore(7)):

- summary: one record's most informative sentence plus its cues;
- pattern: summaries of >= pattern_min_sources independent sources (distinct
  originals with distinct sentences) sharing a cause (subject, else kind and
  actors); later summaries of the same cause join the pattern;
- principle: a pattern restated without its actors;
- policy: a principle whose originals carry outcomes joins the outcome policy of
  its cause (policies need a direction, which only outcomes give).

Quality gates in code (memstore(7), DISTILLATION): no empty text, no sourceless record, nothing under
``distill.min_chars``. Policies from outcomes (memstore.policies) are derived in
the same run; a second run at the same ``now`` appends nothing.
"""

from __future__ import annotations

import hashlib

from .conflicts import conflict_id, policy_conflicts, settled
from .extractive import central_sentence, informative_sentence, tokens
from .fold import apply_stage
from .model import AXES, LEVELS, Memory, Salience, log_record
from .policies import (
    DIRECTION,
    OPPOSITE,
    cause_key,
    cause_label,
    outcome_groups,
    policy_id,
    policy_record,
    standing,
)
from .salience import is_protected
from .tally import effective_of
from .working import Working


def derived_id(level: str, parts) -> str:
    raw = "\x1f".join(("derived", level, *parts))
    return "m" + hashlib.sha256(raw.encode()).hexdigest()[:15]


def passes_gates(core: str, text: str, sources, config) -> bool:
    """Code-level quality gates (memstore(7), DISTILLATION): a heuristic must never ship an empty (no extracted
    content), ungrounded (no sources) or trivial (text under min_chars) abstraction."""
    return bool(core.strip()) and bool(sources) and len(text.strip()) >= config["distill"]["min_chars"]


def _originals(s, m: Memory) -> list[Memory]:
    """The raw records at the bottom of a derived record's provenance, in creation order."""
    if m.level == "raw":
        return [m]
    seen: dict[str, Memory] = {}
    for sid in m.derived_from:
        src = s.memories.get(sid)
        if src is not None:
            for o in _originals(s, src):
                seen.setdefault(o.id, o)
    return sorted(seen.values(), key=lambda o: (o.seq, o.id))


def _derived(level: str, rid: str, text: str, sources: list[Memory], now: str) -> dict:
    """A derived record: cues shared by its sources, max salience, mean confidence."""
    first = sources[0]
    kinds = sorted({m.kind for m in sources}, key=lambda k: (-sum(m.kind == k for m in sources), k))
    outcomes = {m.outcome for m in sources}
    latest = max(sources, key=lambda m: (m.occurred_at, m.seq))  # ISO prefixes sort in time order
    salience = first.salience
    for m in sources[1:]:
        salience = salience.merge_max(m.salience)
    record = Memory(
        id=rid, text=text, recorded_at=now, occurred_at=latest.occurred_at, precision=latest.precision,
        kind=kinds[0], subject=first.subject, domain=first.domain,
        actors=tuple(sorted({a for m in sources for a in m.actors})),
        outcome=outcomes.pop() if len(outcomes) == 1 else None,
        time_buckets=tuple(sorted({b for m in sources for b in m.time_buckets})),
        tier="long", level=level, salience=Salience(**{a: getattr(salience, a) for a in AXES}),
        confidence=round(sum(m.confidence for m in sources) / len(sources), 4), source="tool",
        valid_from=now, derived_from=tuple(m.id for m in sources),
        mention_count=sum(m.mention_count for m in sources), last_reinforced_at=now,
    )
    d = log_record(record)
    return d


def _cues(m: Memory) -> str:
    month = next((b for b in m.time_buckets if len(b) == 7), m.occurred_at[:7])
    parts = [m.kind, m.subject, ", ".join(m.actors), month, m.outcome]
    return "; ".join(p for p in parts if p)


def _summary(s, m: Memory, now: str, config) -> list[dict]:
    core = informative_sentence(m.text)
    text = f"{core} [{_cues(m)}]"
    if not passes_gates(core, text, [m.id], config):
        return []
    return [{"op": "distill", "at": now, "memory": _derived("summary", derived_id("summary", [m.id]), text, [m], now),
             "abstracts": [m.id]}]


def _label(m: Memory) -> str:
    return (f"[{m.domain}] " if m.domain else "") + cause_label(m)


def _pattern_text(s, sources: list[Memory], independent: int) -> tuple[str, str]:
    originals = [o for m in sources for o in _originals(s, m)]
    months = sorted(o.occurred_at[:7] for o in originals)
    span = months[0] if months[0] == months[-1] else f"{months[0]}..{months[-1]}"
    core = central_sentence([o.text for o in originals])
    return core, f"{_label(sources[0])}: {core} [pattern across {independent} independent sources, {span}]"


def _independent(s, sources: list[Memory]) -> list[Memory]:
    """Sources with distinct originals and distinct sentences: two is chance, three a pattern."""
    kept, seen_ids, seen_text = [], set(), set()
    for m in sources:
        origins = {o.id for o in _originals(s, m)}
        sentence = tokens(" ".join(informative_sentence(o.text) for o in _originals(s, m)))
        if origins & seen_ids or sentence in seen_text:
            continue
        kept.append(m)
        seen_ids |= origins
        seen_text.add(sentence)
    return kept


def _patterns(s, summaries: list[Memory], now: str, config) -> list[dict]:
    groups: dict[tuple, list[Memory]] = {}
    for m in summaries:
        if (key := cause_key(m)) is not None:
            groups.setdefault(key, []).append(m)
    events = []
    for key, members in groups.items():
        pid = derived_id("pattern", key)
        existing = s.memories.get(pid)
        if existing is not None and existing.status != "active":
            continue
        sources = [s.memories[i] for i in existing.derived_from if i in s.memories] if existing else []
        sources += members
        independent = len(_independent(s, sources))
        if existing is None and independent < config["distill"]["pattern_min_sources"]:
            continue  # independence gates the pattern; repeats then count as its sources too
        core, text = _pattern_text(s, sources, independent)
        if passes_gates(core, text, sources, config):
            events.append({"op": "distill", "at": now, "memory": _derived("pattern", pid, text, sources, now),
                           "abstracts": [m.id for m in members]})
    return events


def _principle(s, m: Memory, now: str, config) -> list[dict]:
    originals = _originals(s, m)
    sentence = central_sentence([o.text for o in originals])
    for actor in m.actors:  # a principle holds whoever was involved
        sentence = " ".join(w for w in sentence.split() if w.strip(",.;:").casefold() != actor.casefold())
    text = f"{_label(m)}: {sentence} [principle from {len(originals)} sources]"
    if not passes_gates(sentence, text, [m.id], config):
        return []
    return [{"op": "distill", "at": now, "abstracts": [m.id],
             "memory": _derived("principle", derived_id("principle", [m.id]), text, [m], now)}]


def _to_policy(s, m: Memory, now: str, config) -> list[dict]:
    """A principle joins its cause's outcome policy when its originals point one way."""
    key = cause_key(m)
    outcomes = [o.outcome for o in _originals(s, m) if o.outcome in DIRECTION]
    neg, pos = outcomes.count("negative"), outcomes.count("positive")
    if key is None or neg == pos or max(neg, pos) < config["distill"]["policy_min_support"]:
        return []
    policy = s.memories.get(policy_id(key, "mitigate" if neg > pos else "reinforce"))
    if policy is None or policy.status != "active":
        return []
    record = log_record(policy)
    return [{"op": "policy", "at": now, "memory": record, "abstracts": [m.id]}]


def _climb(s, now: str, config) -> list[dict]:
    cfg = config["salience"]
    below: dict[str, list[Memory]] = {level: [] for level in LEVELS}
    eligible = [m for m in s.ordered()
                if m.status == "active" and m.tier == "long" and m.level != "policy" and m.abstracted_by is None
                and m.recorded_at < now and not is_protected(m.salience, cfg["protect_threshold"])]
    # effective salience by numpy (a million records: seconds less), the same numbers
    for m, value in zip(eligible, effective_of(eligible, now, config), strict=True):
        if value < config["distill"]["floor"]:
            below[m.level].append(m)
    events: list[dict] = []
    for m in below["raw"]:
        events += _summary(s, m, now, config)
    events += _patterns(s, below["summary"], now, config)
    for m in below["pattern"]:
        events += _principle(s, m, now, config)
    for m in below["principle"]:
        events += _to_policy(s, m, now, config)
    return events


def _policies(s, now: str, config) -> list[dict]:
    """Create or update the policies of each cause whose outcomes changed, then settle which
    stands on the balance of evidence (memstore.policies.standing)."""
    c = config["distill"]
    events: list[dict] = []
    for key, sides in outcome_groups(s).items():
        changed = []
        for direction in ("mitigate", "reinforce"):
            evidence, against = sides.get(direction, []), sides.get(OPPOSITE[direction], [])
            if len(evidence) < c["policy_min_support"]:
                continue
            record = policy_record(key, direction, evidence, now, config, against)
            old = s.memories.get(record["id"])
            if old is not None and (old.status == "invalidated" or (
                    list(old.derived_from) == record["derived_from"] and list(old.against) == record["against"])):
                continue  # the same outcomes (a person's ruling on them holds), or a person forgot it
            changed.append({"op": "policy", "at": now, "memory": record})
        if changed:  # only new outcomes reopen the question (a person's ruling holds till then)
            apply_stage(s, changed)
            events += changed + _standing(s, key, sides, now, config)
    return events


def _standing(s, key: tuple, sides: dict, now: str, config) -> list[dict]:
    """Supersede, bring back or set against each other the two policies of a cause, as the
    balance of its outcomes says. A policy a person forgot is out of play."""
    policies = {d: m for d in ("mitigate", "reinforce")
                if (m := s.memories.get(policy_id(key, d))) is not None and m.status in ("active", "superseded")}
    neg, pos = len(sides.get("mitigate", [])), len(sides.get("reinforce", []))
    verdict = standing(neg, pos, config["distill"]["policy_majority"])
    why = f"evidence: {neg} negative vs {pos} positive outcomes"
    events: list[dict] = []
    if verdict == "contested":
        if len(policies) < 2:
            return []
        mit, rei = policies["mitigate"], policies["reinforce"]
        for m in (mit, rei):
            if m.status == "superseded":
                events.append({"op": "reinstate", "at": now, "id": m.id, "reason": f"{why}: contested"})
        if not settled(mit, rei):
            old, new = sorted((mit, rei), key=lambda m: (m.seq, m.id))
            events.append({"op": "conflict", "at": now, "id": conflict_id(old.id, f"{new.id}@{now}"),
                           "old": old.id, "new": new.id, "rule": "evidence", "detail": why})
    else:
        winner = policies.get("mitigate" if verdict == "stands" else "reinforce")
        loser = policies.get("reinforce" if verdict == "stands" else "mitigate")
        if winner is not None and winner.status == "superseded":
            events.append({"op": "reinstate", "at": now, "id": winner.id, "reason": why})
        if winner is not None and loser is not None and loser.status == "active":
            events.append({"op": "supersede", "at": now, "old": loser.id, "new": winner.id, "reason": why})
    apply_stage(s, events)
    return events


def rows(table, now: str, config):
    """The rows of a snapshot's table (memstore.store.snapshot) a distillation at ``now`` can
    find by scanning, as a boolean mask: a superset of what its scans keep, for a record the
    log after the snapshot does not touch (``store.open.load_state`` builds those besides).
    Its scans: ``_climb``'s eligible records (below ``distill.floor``: the effective salience
    by ``tally.effective_arrays``, with each row where numpy and Python could round apart
    kept), ``outcome_groups``' evidence, the policies (``policy_conflicts``,
    ``_standing``), and the retired abstractions a ``reinstate`` scans for (``fold``).
    Anything else a run reads, it asks for by id."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from .model import KINDS
    from .tally import effective_arrays
    from .timeutil import parse_ts

    def col(name):
        return table.column(name)

    def mask(condition):
        return np.asarray(pc.fill_null(condition, False).to_numpy(zero_copy_only=False), dtype=bool)

    kept = mask(pc.equal(col("level"), "policy")) | mask(col("retired"))
    kept |= mask(pc.and_(pc.equal(col("level"), "raw"), pc.is_valid(col("outcome"))))
    at = np.flatnonzero(mask(pc.and_(pc.and_(pc.equal(col("status"), "active"), pc.equal(col("tier"), "long")),
                                     pc.and_(pc.not_equal(col("level"), "policy"),
                                             pc.and_(pc.is_null(col("abstracted_by")),
                                                     pc.less(col("recorded_at"), now))))))
    if len(at):
        part = table.select(["salience", "confidence", "recall_count", "kind", "recorded_at",
                             "last_reinforced_at", "last_recalled_at"]).take(pa.array(at))
        salience = part.column("salience").combine_chunks()
        axes = [np.asarray(salience.field(a).to_numpy(zero_copy_only=False), dtype=np.float64) for a in AXES]
        # salience.last_use (the latest of three times: their text sorts in time order), each
        # distinct time parsed once as effective_of parses it
        used = pc.max_element_wise(part.column("recorded_at"), part.column("last_reinforced_at"),
                                   part.column("last_recalled_at"), skip_nulls=True)
        times = pc.unique(used)
        t = int(parse_ts(now).timestamp())
        seconds = np.array([t - int(parse_ts(u).timestamp()) for u in times.to_pylist()], dtype=np.int64)
        since = seconds[np.asarray(pc.index_in(used, value_set=times).to_numpy(zero_copy_only=False), dtype=np.int64)]
        kinds = np.asarray(pc.fill_null(pc.index_in(part.column("kind"), value_set=pa.array(KINDS)),
                                        len(KINDS)).to_numpy(zero_copy_only=False), dtype=np.int64)
        value, unsure = effective_arrays(axes, since, kinds,
                                         np.asarray(part.column("confidence").to_numpy(), dtype=np.float64),
                                         np.asarray(part.column("recall_count").to_numpy(), dtype=np.int64), config)
        kept[at[(value < config["distill"]["floor"]) | unsure]] = True
    return kept


def distill(state, *, now: str, config, embedder=None) -> list[dict]:
    """The events one distillation at ``now`` appends (without seq), in order."""
    del embedder  # abstractions are extractive; the parameter keeps every stage's signature
    work = Working.of(state)  # its listings patched, not sorted again each stage
    events: list[dict] = []
    while True:
        batch: list[dict] = []
        for stage in (_policies, _climb, policy_conflicts):
            found = stage(work, now, config)
            apply_stage(work, found)
            batch += found
        if not batch:
            return events
        events += batch
