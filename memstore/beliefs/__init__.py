"""Belief updates in everyday words, English and Japanese, without a model (memstore(7), CONFLICTS).

Two memories are about the same *frame* when they say something about the same holder
(me, my sister, Ken, or nobody in particular) and the same content words, once update
words ("actually", "anymore", 「もう」), negators and relative time words are set aside.
A newer memory *updates* an older one on its frame when it

- negates it ("I'm not vegetarian anymore" after "I am vegetarian"): what the negator
  governs (its clause; the clause before it in Japanese) is in the other text, and the
  negation parity of the first sentence differs;
- stops or cancels it ("I stopped going to the gym", 「定例は中止」), or ends a practice
  the old text states ("the study group ended" after "every Friday ..."): what the stop
  word governs is mostly in the old text and much of what the old text says;
- replaces one thing by another ("we replaced Jenkins with GitHub Actions", "the 15th,
  not the 12th"): the thing replaced is in the old text;
- gives a new value for the same statement ("the standup is at 10 now", 「今は東京に住んで
  いる」): the same words with one value (a number, an identifier, a day, a place) or one
  word in one place changed, and an update word, or a single-valued frame of a person or a
  thing (where one lives or works, a name, an address, a birthday, a diet);
- gives a role a new holder, or a person a new role.

An update word counts only when the old text does not say it too ("Bumped X in PR #152"
and "... PR #178" are one sentence about two events). Lookalikes do not update: a
different holder ("my sister is not vegetarian"), a negation about a different object
("not allergic to shellfish" vs "allergic to peanuts"), a different time (both texts name
explicit, different times and the newer does not say it moved), a value and a word that
differ together (another event of the same sort), or a second value of a statement that
can hold several ("I like tea", "I also like coffee").

``relation(old, new)`` gives a ``Verdict``: ``certain`` updates supersede the older memory;
unsure ones (a match made only through the bilingual concept list, a bare negation of one
shared word, a single-valued frame sharing one word) open a conflict for a person.
``later(old, new)`` says whether a memory may update another at all (said after it, and
not about an earlier year); ``update_signal`` is recall's weaker test for two memories the
embedder puts on one topic, and ``change_signal`` weaker still (no update word needed, only
nothing that says the older belief holds: recall just orders such a pair newer first);
``signal`` gives the strongest of the two; ``about`` tells whether the newer text names what
the older one is about. Pure and deterministic; a text's analysis is cached, so
consolidate and recall can compare many pairs.
"""

from __future__ import annotations

from .frame import Frame, frame, keys
from .rules import (
           Verdict,
           about,
           change_signal,
           later,
           one_thing,
           relation,
           same_holder,
           signal,
           update_signal,
)

__all__ = ["Frame", "Verdict", "about", "change_signal", "frame", "keys", "later", "one_thing", "relation", "same_holder", "signal",
           "update_signal"]
