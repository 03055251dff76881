"""LLM-free classification of free text into kind, tier and prior salience.

Rough by design: the value of a memory is decided later by consolidation
(memstore(7), SALIENCE). The rules are ordered; the first that matches wins.
Each kind brings a per-axis prior whose importance and risk stay under
salience.protect_threshold: only strong cue words ("never", "must", 「絶対」, an
allergy) raise them to CUE, so only what is marked important or risky is protected
from decay. Explicit options override all of it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import cache, lru_cache

from .model import Salience


@dataclass(frozen=True, slots=True)
class Classification:
    kind: str
    tier: str  # "short" | "long" | "skip"
    prior: Salience  # the axes not given explicitly: the kind's prior, raised by cue words
    rule: str
    cue: str | None = None  # "importance" | "risk": what a cue word raised


def _p(importance, urgency, risk, novelty, emotion, recurrence, actionability) -> Salience:
    return Salience(importance, urgency, risk, novelty, emotion, recurrence, actionability)


# Per-kind priors (memstore(7), SALIENCE). Importance and risk stay at most 0.65, under the
# default protect_threshold 0.7: a kind alone never protects a memory from decay. The
# importance of the long-lived kinds is at least salience.floor_importance (0.6), so they
# keep the importance floor. Episodic kinds carry no evidence for one axis over another.
_EPISODIC = Salience.uniform(0.5)
PRIORS: dict[str, Salience] = {
    "note": _EPISODIC, "meeting": _EPISODIC, "incident": _EPISODIC, "deal": _EPISODIC,
    "disambiguation": _EPISODIC,
    # a decision changes what to do, usually soon: actionability and urgency lead
    "decision": _p(0.65, 0.6, 0.5, 0.6, 0.4, 0.5, 0.85),
    # a preference is felt and comes up again and again; rarely urgent
    "preference": _p(0.6, 0.2, 0.4, 0.5, 0.7, 0.8, 0.6),
    # a rule: applied often, steers action, costly to forget
    "policy": _p(0.65, 0.4, 0.6, 0.4, 0.3, 0.8, 0.9),
    # knowledge: recurs, seldom urgent or emotional
    "definition": _p(0.65, 0.2, 0.4, 0.6, 0.2, 0.7, 0.5),
    "fact": _p(0.65, 0.3, 0.5, 0.6, 0.3, 0.6, 0.5),
    # a how-to is for doing, again and again
    "procedure": _p(0.65, 0.3, 0.5, 0.4, 0.2, 0.8, 0.9),
    # a plan is time-bound and actionable
    "plan": _p(0.6, 0.8, 0.4, 0.6, 0.3, 0.4, 0.85),
}

# What a strong cue word raises importance (and, for a risk word, risk) to: at the default
# protect_threshold (0.7) such a memory is protected.
CUE = 0.8

_I = re.IGNORECASE
_APOS = "['\u2019]"

# The cue patterns below run on the lowercased text, and only when one of these words is in
# it (every cue match contains one): a fraction of the full patterns' cost on every write
# (bench/foundation.py, bulk remember).
_HINT = re.compile(r"never|must|under no|do(?:n|\snot)|always|cr(?:itical|ucial)|important"
                   r"|allerg|anaphyla|security|vulnerab"
                   r"|絶対|必ず|決して|厳禁|禁止|重要|アレルギー|危険|脆弱性")

# Words that mark a memory as important: a rule stated as one, or explicit emphasis. Only
# their normative uses count: "never" as an obligation ("Never store card numbers", "we
# must never", "the primary is never restarted"), not as a report ("I've never been", "the
# build never finished"); "must" as an obligation, not a guess ("it must have been the
# cache", "you must be tired"); "always", "do not" and "don't" as an imperative opening a
# sentence ("Always tag releases", not "I always take the bus" nor "Don't know why");
# "critical", "crucial" and "important" as a label ("Important: ...") or a rule ("it is
# important to/that ...", not a question), not as a description ("the important thing was
# the food", "critical path analysis"); 「重要」 as a label or a rule (「重要：」「…ことが重要」),
# not 「重要な会議」 or 「重要業績評価指標」; 「絶対」 not in 「絶対値」「絶対パス」. "never mind" and
# a negated "not important" are not cues. English and Japanese. Lowercase: matched on
# text.lower().
_START = r"(?:^|(?<=[.!?;:\n]))\s*"
_PAST = (r"(?:\w+[^e\W]ed|\w+ied|been|had|did|got|gotten|went|gone|came|saw|seen|heard|knew|known"
         r"|made|took|taken|gave|given|thought|found|told|said|ran|won|wrote|written|became|began"
         r"|begun|understood|showed|shown|felt|left|met|paid|sent|kept|bought|brought|caught)\b")
_EMPHASIS = r"(?:very |really |extremely |absolutely |super |most |so )?"
_IMPORTANT = (
    r"(?:(?<=\bis )|(?<=\bare )|(?<=\bbe ))never\b(?!\s+mind\b)|"
    rf"(?<!have )(?<!{_APOS}ve )(?<!has )(?<!had )(?<!was )(?<!were )"
    rf"\bnever\b(?!\s+(?:mind\b|(?:ever\s+)?{_PAST}))"
    rf"|\bmust(?:n{_APOS}?t)?\b(?!\s+(?:not\s+)?(?:have\s+{_PAST}|be\s+(?:joking|kidding|nice|tired|hard"
    rf"|fun|great|lovely|exhausted|exhausting|annoying|frustrating|so|really|a\s+mistake)\b))"
    rf"|\bunder no circumstances\b|\bdon{_APOS}?t ever\b|\bdo not ever\b"
    rf"|{_START}(?:always|(?:do not|don{_APOS}?t)\b(?!\s+(?:know|think|remember|care|worry|understand"
    rf"|mind|feel|see|get|have|like|want|need|recall|believe|really|even|quite)\b))\b"
    rf"|{_START}{_EMPHASIS}(?:critical|crucial|important)\s*[:!\-\u2013\u2014]"
    rf"|\b(?:is|{_APOS}s|are|{_APOS}re|remains?)\s+{_EMPHASIS}(?:critical|crucial|important)"
    rf"(?:\s+(?:to|that)\b|\s*:)[^?\n]*(?:$|[.!;\n])"
    r"|絶対(?!値|パス|温度|音感|的|評価|量)|必ず|決して|厳禁|禁止"
    r"|(?:^|(?<=[。！!\n]))\s*[【\[［]?\s*重要\s*(?:[:：】\]］!！]|事項)|(?:こと|の)(?:が|は)(?:最も|とても|非常に|極めて)?重要"
)

# Words that mark a memory as risky to forget: a health risk or a security hole. A mention
# of a password is not one (a secret does not belong in memory; memstore(7), THREAT MODEL),
# and "Never share the password" is protected by "never". Lowercase, as IMPORTANT.
_RISK = (
    r"\ballerg(?:ic|y|ies)\b|\banaphyla\w*"
    r"|\bsecurity (?:risk|hole|issue|incident|vulnerabilit(?:y|ies)|breach|flaw|bug|problem)s?\b"
    r"|\bvulnerabilit(?:y|ies)\b"
    r"|アレルギー|危険|脆弱性"
)


@cache
def _cue_patterns() -> tuple[re.Pattern, re.Pattern]:
    """(risk, importance), compiled on the first text with a hint (start-up of `remember`)."""
    return re.compile(_RISK), re.compile(_IMPORTANT)


def cue(text: str) -> str | None:
    """"risk" when a risk word is in the text, "importance" for an importance word, else None."""
    low = text.lower()
    if not _HINT.search(low):
        return None
    risk, important = _cue_patterns()
    if risk.search(low):
        return "risk"
    if important.search(low):
        return "importance"
    return None


@lru_cache(maxsize=64)
def prior(kind: str, cue: str | None = None) -> Salience:
    """The prior salience of a memory of ``kind`` whose text has ``cue`` (cached: frozen)."""
    base = PRIORS.get(kind, _EPISODIC)
    if cue == "risk":
        return replace(base, importance=max(base.importance, CUE), risk=max(base.risk, CUE))
    if cue == "importance":
        return replace(base, importance=max(base.importance, CUE))
    return base


# One acknowledgement, or several run together ("ok thanks", "了解、ありがとうございます").
_ACK = (
    r"(?:(?:hi|hello|hey|yo|thanks|thank you|thx|ty|ok|okay|k|sure|got it|cool|great|nice|"
    r"yes|yeah|yep|no|nope|bye|good (?:morning|night|evening|afternoon)|see you|lol|np|"
    r"sounds good|will do|noted|lgtm|cheers|have a (?:nice|good|great) (?:weekend|day|evening))\b"
    r"(?:\s+(?:so much|a lot|all|everyone|team|there|!))*|\+1"
    r"|こんにちは|こんばんは|おはよう(?:ございます)?|ありがとう(?:ございます|ございました)?|"
    r"どうも|了解(?:です|しました)?|承知(?:しました|いたしました)?|はい|うん|ええ|いいえ|"
    r"よろしく(?:お願いします|おねがいします)?|お疲れ(?:様|さま)(?:です|でした)?|またね|なるほど|"
    r"お先に失礼します|おつかれ(?:さま)?)"
)
_ACK_GAP = r"[\s,.!?！？。、〜ー…w]*"
_GREETING = rf"^\s*{_ACK}(?:{_ACK_GAP}{_ACK})*{_ACK_GAP}$"

_DISAMBIGUATION = (
    r"\b(?:here|in this (?:context|thread|doc(?:ument)?|chat))\b.{0,60}\bmeans?\b"
    r"|\bby [\"'“]?\w[\w\s-]{0,30}[\"'”]? (?:I|we) mean\b"
    r"|ここでの.{1,30}は|この文脈(?:で|での)|ここで言う"
)
_PREFERENCE = (
    r"\b(?:I|we)\s+(?:really\s+)?(?:prefer|like|love|hate|dislike|don'?t like|do not like|"
    r"always|never)\b"
    r"|\bmy favou?rite\b|\bI'?m allergic\b"
    r"|(?:が|は)(?:大?好き|嫌い|苦手)|を好む|私の.{1,20}は|アレルギー"
)
_DECISION = (
    r"\b(?:we|I|the team|they)\s+(?:have\s+)?(?:decided|agreed|chose|chosen|will go with|"
    r"are going with|settled on)\b|\blet'?s go with\b|\bdecision\s*:"
    r"|に決めた|に決定|ことにした|ことに決め|で合意|を採用(?:する|した|します)"
)
_DEFINITION = (
    r"^\s*[\"'“]?[\w][\w\s./+-]{0,40}[\"'”]?\s+(?:is|are)\s+(?:a|an|the|our|short for)\b"
    r"|^\s*[\w][\w\s./+-]{0,40}\s+(?:means|stands for|refers to)\b"
    r"|.{1,40}とは.{1,200}(?:である|です|だ|のこと|を指す|を意味する)"
)

# Lasting facts, standing procedures and scheduled intentions: long-lived kinds, so what is
# said once is not gone in a fortnight. None of them fires on a text that tells an episode:
# one that says when it happened ("today", "this morning", "an hour ago", 「今日」「さっき」)
# or, in Japanese, ends a sentence in the past tense (「…した。」「…だった」); "Met Maria today"
# and 「横浜駅で佐藤さんに会った」 stay notes. Nor on a question: "Does the library close
# earlier on Fridays?" asks, it states nothing.
_EPISODE = (
    r"\b(?:today|tonight|yesterday|this (?:morning|afternoon|evening|week)"
    r"|last (?:night|week|weekend|time)|\w+ ago|just now|right now|again)\b|^\s*just\b"
    r"|今日|今朝|昨日|昨夜|昨晩|今夜|今晩|さっき|先ほど|おととい|先週"
    r"|(?:た|だった|でした|ました|かった)(?:[。.!！]|\s*$)|[?？]"
)


def _lasting(body: str) -> str:
    """``body`` anywhere in a text that tells no episode."""
    return rf"\A(?![\s\S]*(?:{_EPISODE}))[\s\S]*?(?:{body})"


_DAY = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
_MONTH = (r"(?:january|february|march|april|may|june|july|august|september|october|november"
          r"|december)")
# A how-to: "To rotate the keys, run X then Y", "How to deploy: ...", "First X, then Y",
# 「手順：…」, 「鍵を更新するには、…を実行する」.
_PROCEDURE = _lasting(
    r"^\s*(?:how to|steps? (?:to|for)|procedure|instructions|runbook|recipe)\b[^\n:]{0,80}:"
    r"|^\s*to\s+(?!(?:my|your|our|his|her|their|its|the|a|an|be|me|us|him|them|this|that|some)\b)"
    r"[a-z]+\b[^,.;:\n]{0,60}[,:]\s*(?:first\s+)?(?:run|use|open|click|go|call|ask|hold"
    r"|press|type|set|edit|add|remove|delete|restart|stop|start|log|sign|install|update|copy|move"
    r"|select|enter|check|wait|execute|send|create|download|upload|turn|unplug|reboot|apply|merge"
    r"|push|pull|email|contact|visit|change|put|pick|fill|submit|tap|choose|export|import|drain"
    r"|rotate|generate|replace|mount|ssh|sudo|git|make|kubectl|docker|npm|pip)\b"
    r"|^\s*first\b[^\n]{1,120}\bthen\b"
    r"|^\s*(?:作業)?(?:手順|やり方|方法)\s*[:：]"
    r"|[うくぐすつぬぶむる]には[、,\s]*[^。\n]{1,80}?(?:実行|押|開|入力|クリック|選|再起動|止め"
    r"|ログイン|設定|申請|連絡|する|して)"
)
# A scheduled intention: "We're going to migrate in Q3", "The move is scheduled for
# October 1", 「来年の4月に引っ越す予定です」.
_INTENT = (rf"\b(?:i|we|they)(?:{_APOS}(?:re|m)|\s+(?:are|am))?\s+(?:going to|planning to|plan to"
           rf"|plan on|intend to|aim to)\b|\b(?:i|we|they)(?:{_APOS}ll|\s+will)\b")
_HORIZON = (rf"\b(?:next (?:week|month|year|quarter|spring|summer|fall|autumn|winter|sprint|release)"
            rf"|in (?:q[1-4]|h[12]|(?:early |late |mid-?)?(?:{_MONTH}|spring|summer|fall|autumn|winter"
            rf"|20\d\d))|by (?:the )?(?:end of|q[1-4]|{_MONTH})"
            rf"|(?:later )?this (?:year|quarter|spring|summer|fall|autumn|winter))\b")
_PLAN = _lasting(
    r"\b(?:is|are) (?:scheduled|planned|slated) (?:for|to)\b"
    rf"|(?:{_INTENT})[^.!?\n]{{0,80}}?{_HORIZON}|{_HORIZON}[^.!?\n]{{0,40}}?(?:{_INTENT})"
    r"|(?:[うくぐすつぬぶむる]|する)(?:予定|つもり)|(?:来|再来)[週月年期][^。\n]{0,20}予定"
)
# People and pets: names, birthdays, relations and roles, where someone lives or works,
# health facts. "Maria is the billing team lead", "Our cat is called Mochi", 「妹の名前はアナです」.
_ROLE_WORDS = (
    "lead", "manager", "boss", "head", "owner", "director", "ceo", "cto", "cfo", "coo", "vp",
    "founder", "landlord", "landlady", "dentist", "doctor", "physician", "accountant", "lawyer",
    "mentor", "assistant", "brother", "sister", "mother", "father", "mom", "mum", "dad", "son",
    "daughter", "wife", "husband", "partner", "uncle", "aunt", "cousin", "niece", "nephew",
    "grandma", "grandpa", "grandmother", "grandfather", "grandson", "granddaughter", "friend",
    "neighbor", "neighbour", "teacher", "coach", "maintainer", "contact", "therapist", "vet",
    "nanny", "tutor", "roommate", "boyfriend", "girlfriend", "fiance", "fiancee", "fiancé",
    "fiancée", "colleague", "teammate", "supervisor")
_ROLE = "(?:" + "|".join(_ROLE_WORDS) + ")s?"
_WHOSE = rf"(?:my|our|the|his|her|their|\w+{_APOS}s)"
_JA_ROLE_WORDS = (
    "部長", "課長", "係長", "社長", "室長", "店長", "リーダー", "担当者", "担当", "上司", "主治医",
    "かかりつけ医", "かかりつけ", "歯医者", "医者", "マネージャー", "責任者", "代表", "看護師", "弁護士",
    "税理士", "会計士", "先生", "大家", "窓口", "オーナー")
_JA_ROLE = "(?:" + "|".join(_JA_ROLE_WORDS) + ")"
_PERSON = _lasting(
    r"\b(?:name|birthday|anniversary|birth ?date|date of birth|blood (?:type|group))\s+"
    r"(?:is|are|was|falls on)\b"
    r"|\b(?:is|are|was|were)\s+(?:called|named)\b|\bborn (?:in|on)\b"
    rf"|\blives?\s+(?:in|at|near)\b"
    rf"|\b(?:am|is|are|{_APOS}m|{_APOS}s|{_APOS}re)\s+based\s+(?:in|at|near)\b"
    r"|\bworks?\s+(?:at|for)\b(?!\s+(?:me|us|you|him|her|them|now|a while|hours|free)\b)"
    r"|\breports?\s+to\b"
    rf"|\b(?:is|are|was)\s+{_WHOSE}\s+(?:[\w-]+\s+){{0,3}}?{_ROLE}\b"
    rf"|\b{_WHOSE}\s+(?:[\w-]+\s+)?{_ROLE}\s+(?:is|are)\s+(?-i:[A-Z])"
    rf"|\ballergic to\b|\b(?:lactose|gluten)[ -]intolerant\b|\b(?:is|am|are|{_APOS}m|{_APOS}s|{_APOS}re)"
    r"\s+(?:a\s+)?(?:vegetarian|vegan|pescatarian|diabetic|c(?:o)?eliac|epileptic|asthmatic"
    r"|colou?r[ -]?blind|pregnant)\b"
    r"|(?:名前|誕生日|記念日|血液型|生年月日|命日)は"
    r"|に住んで(?:いる|います|いて|る)|在住|に勤めて(?:いる|います)|で働いて(?:いる|います)|に勤務して"
    r"|に通って(?:いる|います)|の出身|出身(?:です|だ|地)|年生まれ"
    rf"|は[^。\n]{{0,20}}?{_JA_ROLE}(?:です|だ|である|をして|[。]|\s*$)|{_JA_ROLE}は"
)
# Configuration: hosts, ports, URLs, versions, limits. "The API timeout is 30 seconds",
# "The staging DB listens on port 5433", 「本番DBのポートは5432です」. Not a state ("the server
# is down", "the DB is slow") nor a definition ("billing-db is a service ...").
_SETTING_WORDS = (
    "port", "hostname", "host", "url", "uri", "address", "ip", "endpoint", "server", "gateway",
    "version", "timeout", "limit", "size", "branch", "path", "directory", "folder", "bucket",
    "region", "database", "db", "domain", "repository", "repo", "retention period", "retention",
    "ttl", "quota", "threshold", "interval", "id", "dashboard", "wiki", "channel", "email",
    "e-mail", "phone", "number", "username", "account", "cluster", "namespace", "zone", "queue",
    "topic", "image", "extension", "zip code", "postcode", "postal code", "rate", "frequency")
_SETTING = "(?:" + "|".join(_SETTING_WORDS) + ")s?"
_STATE = (r"(?:not|down|up|slow|broken|flaky|failing|failed|out|back|offline|online|fine|ok|okay"
          r"|busy|full|overloaded|stuck|dead|being|still|now|currently|finally|temporarily|getting"
          r"|going|very|so|too|really|weird|wrong|missing|unreachable|unavailable|gone|fixed|done"
          r"|ready|better|worse|high|low|red|green|growing|increasing|decreasing|rising|dropping"
          r"|falling|a|an)\b")
# What a setting is set to: a number, a host, a path or URL, a name; "set to" or where it is
# ("at https://..."). Not an adjective: "the wiki is outdated", "the rate is insane".
_VALUE = r"(?:\S*?(?:\d|[./:@_-]\w)|(?-i:[A-Z])|(?:at|on|in|set to)\b)"
_CONFIG = _lasting(
    rf"\b{_SETTING}\s+(?:(?:for|of|on|in|we|i|they)\s+[^\n.;!?]{{1,30}}?\s+)?"
    rf"(?:is|are|=)\s+"
    rf"(?!{_STATE}){_VALUE}|\b{_SETTING}\s*[:=]\s*\S"
    r"|(?<![a-z0-9])(?:ポート|ホスト名?|url|uri|アドレス|ip|バージョン|タイムアウト|上限|下限|サイズ|ブランチ|サーバー?"
    r"|パス|ディレクトリ|フォルダ|リージョン|id|番号|保存期間|有効期限|間隔|設定値|エンドポイント|ドメイン"
    r")は\s*[\x21-\x7e０-９]|最寄り駅は"
)
# Where something runs or lives: "The staging DB listens on port 5433", "We run Python 3.12",
# 「検索サーバーはsearch-01で動いている」.
_SERVICE = _lasting(
    r"\b(?:listens?|is hosted|are hosted|is served|is reachable|are reachable|lives?|runs?)"
    r"\s+(?:on|at)\b"
    rf"|\b(?:run|runs|use|uses|using|is on|are on|{_APOS}re on)\s+[a-z][\w.+-]*\s+v?\d+(?:\.\d+)+\b"
    r"|\b(?:is|are) on the \w+ floor\b"
    r"|に設定(?:されて|して)(?:いる|います|ある)|で(?:動いて|稼働して)(?:いる|います)"
    r"|を(?:使って|使用して)(?:いる|います)"
)
# A recurring schedule: "Backups run every Sunday at 3am", "Payroll is paid on the 25th of each
# month", 「毎週日曜の午前3時にバックアップが走る」.
_SCHEDULE = _lasting(
    rf"\bevery\s+(?:day|night|morning|evening|afternoon|weekday|weekend|week|month|year|quarter"
    rf"|hour|sprint|other|\d+|first|last|second|third|fourth|{_DAY})\b"
    rf"|\beach\s+(?:day|night|morning|week|month|year|quarter|sprint|{_DAY})\b"
    r"|\b(?:daily|weekly|monthly|nightly|yearly|annually|quarterly|hourly)\s*(?:at\b|on\b|[.!]?\s*$)"
    rf"|\b(?:on|every)\s+{_DAY}s\b|\bon (?:weekdays|weekends)\b"
    r"|\b(?:once|twice) an? (?:day|week|month|year)\b"
    r"|毎(?:日|週|月|年|朝|晩|夜|時|営業日)|隔週|隔月|[週月年][0-9０-９一二三四五]回"
    r"|第[0-9０-９一二三四][月火水木金土日]曜|平日(?:の|は)"
)


# Every match of a pattern holds one of its hints (in the folded text, below), so a pattern
# is compiled and run only for a text that holds one: compiling all five slowed every
# `remember` start, most of the time for a text that none of them matches. Held to the
# patterns by a property test (tests/test_classify.py).
_ACK_STARTS = (
    "hi", "hello", "hey", "yo", "thank", "thx", "ty", "ok", "k", "sure", "got it", "cool", "great",
    "nice", "yes", "yeah", "yep", "no", "bye", "good ", "see you", "lol", "np", "sounds good",
    "will do", "noted", "lgtm", "cheers", "have a", "+1",
    "こん", "おは", "あり", "どうも", "了解", "承知", "はい", "うん", "ええ", "いいえ", "よろしく",
    "お疲れ", "またね", "なるほど", "お先に", "おつかれ",
)
_RULE_HINTS = {
    "disambiguation": ("mean", "ここで", "この文脈"),
    "decision": ("decided", "agreed", "chose", "go with", "going with", "settled on", "decision",
                 "決め", "決定", "ことにした", "で合意", "を採用"),
    "preference": ("prefer", "like", "love", "hate", "always", "never", "favo", "allergic",
                   "好", "嫌い", "苦手", "私の", "アレルギー"),
    "definition": ("mean", "stands for", "refers to", "とは"),
    # the durable rules: Japanese and other non-ASCII words here, English words below
    "procedure": ("手順", "やり方", "方法", "には"),
    "plan": ("scheduled", "planned", "slated", "予定", "つもり"),
    "person": ("fianc", "名前", "誕生日", "記念日", "血液型", "生年月日", "命日", "住んで", "在住", "勤め",
               "働いて", "勤務", "通って", "出身", "年生まれ", *_JA_ROLE_WORDS),
    "config": ("ポート", "ホスト", "url", "uri", "アドレス", "ip", "バージョン", "タイムアウト", "上限",
               "下限", "サイズ", "ブランチ", "サーバ", "パス", "ディレクトリ", "フォルダ", "リージョン",
               "id", "番号", "保存期間", "有効期限", "間隔", "設定値", "エンドポイント", "ドメイン",
               "最寄り駅"),
    "service": ("に設定", "動いて", "稼働して", "使って", "使用して"),
    "schedule": ("毎", "隔週", "隔月", "回", "曜", "平日"),
}


def _plural(words) -> frozenset[str]:
    return frozenset((*words, *(w + "s" for w in words)))


# The English words of the durable rules, matched against the text's words (runs of ASCII
# letters and digits): every match holds one as a whole word. Words, not substrings: "port"
# is in "report" and "important", "son" in "reason", and each of these patterns costs more
# to compile than a `remember` can spare on every text that holds one by chance.
_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_RULE_WORDS = {
    "person": _plural(("name", "birthday", "anniversary", "birth", "birthdate", "blood", "called",
                       "named", "born", "live", "based", "work", "report", "allergic", "intolerant",
                       "vegetarian", "vegan", "pescatarian", "diabetic", "celiac", "coeliac",
                       "epileptic", "asthmatic", "blind", "colorblind", "colourblind", "pregnant",
                       *_ROLE_WORDS)),
    "config": _plural((*(w for phrase in _SETTING_WORDS for w in phrase.split() if w != "e-mail"),
                       "mail")),
    "service": frozenset(("listen", "listens", "hosted", "served", "reachable", "live", "lives",
                          "run", "runs", "use", "uses", "using", "on", "floor")),
    "schedule": frozenset(("every", "each", "daily", "weekly", "monthly", "nightly", "yearly",
                           "annually", "quarterly", "hourly", "weekdays", "weekends", "once",
                           "twice", *(d + "s" for d in _DAYS))),
}
# A plan in English is an intention ("we will", "I'm going to") and a time ahead ("next
# month", "in Q3", "by March"): both sets hold a word of every such match.
_INTENT_WORDS = frozenset(("going", "planning", "plan", "intend", "aim", "will", "ll"))
_HORIZON_WORDS = frozenset(("next", "q1", "q2", "q3", "q4", "h1", "h2", "early", "late", "mid",
                            "end", "year", "quarter", "spring", "summer", "fall", "autumn", "winter",
                            *_MONTH[3:-1].split("|")))
# A how-to in English opens with one of these (after white space).
_PROCEDURE_STARTS = ("to", "how", "step", "procedure", "instructions", "runbook", "recipe", "first")
_TOKEN = re.compile(r"[a-z0-9]+")
_SOURCES = {"greeting": _GREETING, "disambiguation": _DISAMBIGUATION, "preference": _PREFERENCE,
            "decision": _DECISION, "definition": _DEFINITION, "procedure": _PROCEDURE,
            "plan": _PLAN, "person": _PERSON, "config": _CONFIG, "service": _SERVICE,
            "schedule": _SCHEDULE}


@cache
def pattern(name: str) -> re.Pattern:
    """The compiled pattern of a rule (greeting, disambiguation, decision, preference,
    definition): on first use."""
    return re.compile(_SOURCES[name], _I)


def _folded(text: str) -> str:
    """Lower case, with the four characters that IGNORECASE also matches to an ASCII letter
    (İ ı → i, ſ → s; the Kelvin sign lowers to k by itself) spelt as that letter."""
    low = text.lower()
    if low.isascii():
        return low
    return low.replace("i\u0307", "i").replace("ı", "i").replace("ſ", "s")


def _may_match(name: str, low: str, words: list[str], tokens: frozenset[str] = frozenset()) -> bool:
    if name == "greeting":
        return low.lstrip().startswith(_ACK_STARTS)
    if name == "definition" and ("is" in words or "are" in words):
        return True
    if any(h in low for h in _RULE_HINTS[name]):
        return True
    if name == "plan":
        return not (_INTENT_WORDS.isdisjoint(tokens)
                    or _HORIZON_WORDS.isdisjoint(tokens) and "in 20" not in low)
    if name == "procedure":
        return low.lstrip().startswith(_PROCEDURE_STARTS)
    return name in _RULE_WORDS and not _RULE_WORDS[name].isdisjoint(tokens)


_RULES = (
    ("disambiguation", ("disambiguation", "short", "disambiguation")),
    ("decision", ("decision", "long", "decision")),
    ("preference", ("preference", "long", "preference")),
    ("procedure", ("procedure", "long", "procedure")),
    ("plan", ("plan", "long", "plan")),
    ("person", ("fact", "long", "person")),
    ("config", ("fact", "long", "config")),
    ("service", ("fact", "long", "service")),
    ("schedule", ("fact", "long", "schedule")),
    ("definition", ("definition", "long", "definition")),
)
_DEFAULT = ("note", "short", "default")
_WORDED = frozenset(("plan", "person", "config", "service", "schedule"))

NOTE = Classification("note", "short", PRIORS["note"], "default")
SKIP = Classification("note", "skip", Salience.uniform(0.0), "greeting")


@lru_cache(maxsize=64)
def _result(rule: tuple[str, str, str], found: str | None) -> Classification:
    kind, tier, name = rule
    return Classification(kind, tier, prior(kind, found), name, found)


def classify(text: str) -> Classification:
    low = _folded(text)
    words = low.split()  # the same white space as the patterns' \s
    if _may_match("greeting", low, words) and pattern("greeting").match(text):
        return SKIP
    found = cue(text)
    tokens = None
    for name, rule in _RULES:
        if tokens is None and name in _WORDED:
            tokens = frozenset(_TOKEN.findall(low))
        if _may_match(name, low, words, tokens or frozenset()) and pattern(name).search(text):
            return _result(rule, found)
    return _result(_DEFAULT, found)
