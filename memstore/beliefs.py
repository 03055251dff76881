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
embedder puts on one topic. Pure and deterministic; a text's analysis is cached, so
consolidate and recall can compare many pairs.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, replace
from functools import lru_cache

from .cjk import CJK_CLASS

_I = re.IGNORECASE

# --- update words -----------------------------------------------------------------------------
# Each is removed from the content before comparing; its sort tells how the new text updates.
_EN_MARKERS = (
    ("stop", r"\b(?:stop|stops|stopped|stopping|quit|quits|quitting|gave up|give up|given up|no longer|"
             r"not any ?more|no more|ditched|left|retired from|discontinued|sold|"
             r"stepped down|step down|cancel+ed (?:my|our|the) (?:subscription|membership|plan))\b"),
    ("cancel", r"\b(?:cancel|cancels|cancel+ed|cancel+ing|call(?:ed)? off|scrapped|is off(?!-)|are off(?!-)|"
               r"won'?t happen|not happening|postponed|put on hold|shelved|went virtual)\b"),
    ("replace", r"\b(?:replace|replaces|replaced|replacing|swap|swapped|switch|switches|switched|"
                r"switching|migrate|migrates|migrated|migrating|move|moves|moved|moving|change|changes|"
                r"changed|changing|convert(?:ed)?|upgrade[ds]?|downgrade[ds]?|traded|took over|"
                r"take over|taking over|handed|hand(?:ing)? over|succeeded|instead of|instead|"
                r"rather than|in place of|over to|gone over|went over|transferred|transfers|"
                r"relocated|raised|raises|went up|goes up|go up|increased|decreased|bumped|cut|dropped|ditched)\b"),
    ("change", r"\b(?:actually|anymore|any more|now|nowadays|these days|currently|from now on|"
               r"going forward|since|updated?|correction|corrected|correct|"
               r"turns out|it'?s now|became|become|becomes|rescheduled|pushed|oops|sorry|wait|"
               r"started|starting|began|begun|joined|promoted|hired|finally|effective|"
               r"(?:was|were|had it|got it|got) wrong|misread|my mistake|typo|mistake|"
               r"(?:went|goes|go|gone|is|are) live)\b"),
)
_JA_MARKERS = (
    ("stop", r"やめ|辞め|止め|卒業し|解約|手放|退職|退会|引退|しなくな|しておらず|"
             r"行かなくな|飲まなくな|食べなくな|吸わなくな|廃止|禁煙|禁酒|断念|諦め"),
    ("cancel", r"中止|キャンセル|取りやめ|取り止め|とりやめ|延期|見送|白紙|流れ"),
    ("replace", r"乗り換え|切り替え|切り替わ|置き換え|移行|代わりに|かわりに|交代|引き継|"
                r"替え|換え|代わ|移し|移動|移さ|移っ|移り|移転|異動|転向|越して|越し"),
    ("change", r"もう|今は|今では|いまは|最近は|最近|現在は|現在|これからは|今後は|実は|訂正|"
               r"正しくは|間違|勘違い|失礼しました|変わ|変更|変え|になった|になりました|になります|"
               r"に改定|改定|値上が|値下が|引っ越|引越|転職|転勤|昇進|就任|始め|はじめ|"
               r"に決まっ|ことにし|ようになっ|ではなく|じゃなく"),
    # "New number: ...", 「新しい住所：」 open an update; "sent a new quote" does not
    ("change", r"^\s*(?:new|our new|my new|the new|latest)\b|^\s*新しい"),
)
_MARKERS = tuple((sort, re.compile(p, _I)) for sort, p in _EN_MARKERS + _JA_MARKERS)
# An end ("ended", 「終了」) stops a practice ("every Friday", 「毎週」), not an event (a talk ends).
_END = re.compile(r"\b(?:ended|has ended|is over|wrapped up for good|came to an end)\b|終了|終わりました|終わった", _I)
_RECURRING = re.compile(r"\b(?:every|each)\s+(?:day|week|month|morning|evening|night|monday|tuesday|wednesday|"
                        r"thursday|friday|saturday|sunday)|\b(?:weekly|daily|monthly|biweekly|mondays|tuesdays|"
                        r"wednesdays|thursdays|fridays|saturdays|sundays)\b|毎週|毎日|毎朝|毎晩|毎月|隔週", _I)
_MARKERS += (("end", _END),)

# Words that only say "also": a second value that does not replace the first.
_ALSO = re.compile(r"\b(?:also|too|as well|another|plus|in addition)\b"
                   r"|も(?:よく|また|たまに|時々)?(?:好き|飲|食|使|行|する|やる|して|読)", _I)

# Negators (parity decides a flip). "no longer" and "not anymore" negate too.
_EN_NEG = re.compile(r"\bno\s+longer\b|\b(?:not|never|no|zero|none|nobody|nothing|neither|nor|cannot|"
                     r"without)\b|n['’]t\b", _I)  # "stopped", "quit": stop words, a rule of their own
_JA_NEG = re.compile(
    r"(?<![少危])(?:ません|なかった|なければ|しない|ない|なし|なく|ず(?=[、。\s]|$))")  # やめた: a stop word

# "the 15th, not the 12th", 「25日ではなく20日」: a corrected value, not a negated statement.
_CONTRAST = re.compile(r",\s*(?:and\s+)?not\s+(?:the\s+|a\s+|an\s+)?[\w.:$%/-]+|"
                       r"(?:\d+[^\s、。\d]{0,2}|[\u30a0-\u30ffー]+|[\u4e00-\u9fff々]{1,4}|[A-Za-z]+)(?:ではなく|じゃなく)(?:て)?",
                       _I)
_NOT_PREFIX = re.compile(r"^[,\s]*(?:and\s+)?not\b|(?:ではなく|じゃなく)(?:て)?$", _I)
# "wait no, ...", "no, ...": an interjection, not a negation
_INTERJECTION = re.compile(r"(?:^|(?<=[\s,.!?]))(?:(?:wait|oh|uh|um|ah|hmm)\s+)?no(?=\s*[,.!])", _I)
# The words a negator governs: the rest of its clause (English), or the clause before it (Japanese).
_EN_SCOPE = re.compile(r"([^,.;:!?—–()]{0,60}?)(?:\bno\s+longer\b|\b(?:not|never|no|cannot)\b|n['’]t\b)"
                       r"([^,.;:!?—–()]{0,60})", _I)
_JA_SCOPE = re.compile(r"([^、。,.!?！？\s]{1,30}?)(?:ません|ない|なかった|なく|ず)")

# Relative time words: when it was said, not what.
_TIME_WORDS = re.compile(
    r"\b(?:since|from|as of|starting)?\s*(?:last|this|next|past|previous)\s+(?:week|month|year|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|weekend|night|time)\b|"
    r"\b(?:yesterday|today|tonight|tomorrow|recently|lately|earlier|ago|a while|soon)\b|"
    r"\b\d+\s+(?:days?|weeks?|months?|years?)\s+ago\b|"
    r"先週|先月|去年|昨年|今年|今月|今週|来週|来月|昨日|今日|明日|最近|この前|先日|\d+(?:日|週間|か月|ヶ月|年)前|"
    r"毎週|毎日|毎朝|毎晩|毎月|毎年|いつも|\bevery (?:day|week|month|morning|night|evening)\b",
    _I)
# Explicit times (years, quarters, dates): two texts naming different ones are about
# different times, not an update.
_EXPLICIT_TIME = re.compile(
    r"\d{4}-\d{2}(?:-\d{2})?|\b(?:19|20)\d{2}\b|\bq[1-4]\b|(?:19|20)\d{2}年|第[1-4一二三四]四半期|"
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2}(?:st|nd|rd|th)?\b|"
    r"\d{1,2}月\d{1,2}日", _I)

# --- holders --------------------------------------------------------------------------------
_SELF = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|myself|we|we're|we've|our|us|the user|"
                   r"user)\b|私|僕|俺|わたし|自分|ユーザー|うちの", _I)
_RELATIVES = (
    "sister", "brother", "mom", "mother", "dad", "father", "wife", "husband", "partner", "son",
    "daughter", "boss", "manager", "friend", "colleague", "coworker", "roommate", "neighbor",
    "neighbour", "cousin", "aunt", "uncle", "grandma", "grandmother", "grandpa", "grandfather",
    "kid", "kids", "child", "children", "girlfriend", "boyfriend", "parents", "family", "team lead",
)
_REL = re.compile(r"\b(?:my|our|his|her|their)\s+(?:\w+\s+)?(" + "|".join(_RELATIVES) + r")s?\b", _I)
_JA_REL = re.compile(r"(姉|兄|妹|弟|母|父|妻|夫|嫁|旦那|息子|娘|友達|友人|上司|同僚|部長|課長|祖母|祖父|彼女|彼氏|家族|両親|"
                     r"いとこ|従兄弟|従姉妹|叔父|叔母|伯父|伯母|甥|姪|孫|おじ|おば)"
                     r"(?:さん|ちゃん|くん)?(?:は|が|も|の)")
_JA_NAME = re.compile(r"([\u4e00-\u9fff々\u30a0-\u30ffー]{1,6}|[A-Z][a-z]+)(?:さん|くん|君|ちゃん|様|氏|先生)")
# Honorifics on a job, not a name (獣医さん, 大家さん).
_JA_JOBS = frozenset("獣医 医者 店員 大家 先生 運転手 美容師 担当 上司 お客 客 業者 管理人 受付 看護師 薬剤師".split())
# A capitalised first word that is not a function word names someone or something.
_COMMON_START = frozenset("""a an the this that these those it its my our your their his her we i
there here what when where who why how our user actually btw so and but also now just
update correction note fyi decision reminder""".split())

# --- content words ----------------------------------------------------------------------------
_STOP = frozenset("""
a about above after again against all am an and any are as at be because been before being below
between both but by can could did do does doing down during each few for from further had has have
having he her here hers herself him himself his how i if in into is it its itself just me more most
my myself no nor not of off on once only or other our ours ourselves out over own same she should so
some such than that the their theirs them themselves then there these they this those through to
too under until up very was we were what when where which while who whom why will with would you
your yours yourself yourselves i'm i've i'd we're we've it's that's there's user one ones thing things
lol haha btw fyi tbh imo idk ngl ok okay well oh hey really pretty quite totally still already get got go going goes
went gone use using used uses usually always often every each per via like around about
""".split())
_WORD = re.compile(rf"[{CJK_CLASS}]+|[$¥€£]?\d{{1,3}}(?:,\d{{3}})+(?:\.\d+)?|[$¥€£]?[a-z0-9][a-z0-9'’:.\-]*[a-z0-9]"
                   r"|[a-z0-9]", _I)
# Kanji runs and katakana runs are words of their own (毎朝コーヒー is 毎朝 and コーヒー).
_KANJI_KATA = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff々〆]+|[\u30a0-\u30ffー]+")
# Roles: "X leads the team" -> "X is now the CTO" changes X's role; "Bob is the tech lead" ->
# "Alice is the tech lead now" changes who holds it.
_ROLE = re.compile(
    r"\b(?:lead|leads|leader|head|heads|manager|manages|director|cto|ceo|cfo|coo|vp|engineer|designer|"
    r"intern|owner|owns|chair|captain|pm|admin|maintainer|on-call|oncall|in charge)\b"
    r"|リーダー|部長|課長|社長|担当|マネージャー|エンジニア|責任者|所属|異動|主任|係長|室長|取締役|常務|専務|役員|"
    r"デザイナー|リサーチャー|メンター|インターン|昇進|就任|転向|\bpromoted\b|\bappointed\b", re.IGNORECASE)

# Single-valued frames: a new value replaces the old even without an update word.
# Single-valued frames of a person or a thing: where one lives or works, a role, a name,
# an address or number, a favourite, a diet. A new value replaces the old even without an
# update word; everything else (a lunch place, an on-call day, a price) needs one, since a
# store of daily notes is full of the same sentence with another value on another day.
_SINGLE = re.compile(
    r"\b(?:live|lives|living|based in|works? (?:at|for|in|from)|working (?:at|for|in|from)|employer|"
    r"job title|favou?rite|(?:first |last |full )?name is|address|phone|email|birthday|"
    r"vegetarian|vegan|married|single|pregnant|time ?zone)\b"
    r"|住|勤め|勤務|働い|役職|部署|所属|好きな|名前|住所|電話|メール|誕生日|ベジタリアン|菜食|支社|本社|支店|"
    r"引っ越|引越|転居|移住|越して|アドレス|[\u4e00-\u9fff]{1,4}部(?![屋品分下])|"
    r"\b(?:moved|relocated) to\b",
    _I)

# A small bilingual concept list: frame words an English memory and its Japanese update share.
# Matches made only through it are unsure (a conflict for a person, not a supersession).
_CONCEPTS = {
    "引っ越": "住", "引越": "住", "job": "勤", "勤め": "勤", "勤務": "勤", "働": "勤", "職": "勤", "転職": "勤",
    "vegetarian": "菜食", "vegan": "菜食", "ベジタリアン": "菜食", "菜食": "菜食", "meat": "肉", "肉": "肉",
    "fish": "魚", "魚": "魚", "coffee": "コーヒー", "コーヒー": "コーヒー", "tea": "茶", "茶": "茶",
    "紅茶": "茶", "お茶": "茶", "beer": "酒", "alcohol": "酒", "drink": "飲", "drinking": "飲",
    "飲": "飲", "お酒": "酒", "酒": "酒", "smoke": "煙", "smoking": "煙", "smoker": "煙", "タバコ": "煙",
    "煙草": "煙", "喫煙": "煙", "gym": "ジム", "ジム": "ジム", "run": "走", "running": "走", "ラン": "走",
    "走": "走", "car": "車", "drive": "車", "drives": "車", "driving": "車", "車": "車", "運転": "車",
    "train": "電車", "電車": "電車", "bike": "自転車", "bicycle": "自転車", "自転車": "自転車",
    "dog": "犬", "犬": "犬", "cat": "猫", "猫": "猫", "phone": "電話", "電話": "電話", "email": "メール",
    "メール": "メール", "address": "住所", "住所": "住所", "birthday": "誕生日", "誕生日": "誕生日",
    "office": "オフィス", "オフィス": "オフィス", "事務所": "オフィス", "team": "チーム", "チーム": "チーム",
    "meeting": "会議", "会議": "会議", "定例": "会議", "standup": "会議", "sync": "会議",
    "cell": "電話", "携帯": "電話",
    "deadline": "期限", "due": "期限", "締め切り": "期限", "締切": "期限", "期限": "期限", "納期": "期限",
    "price": "価格", "価格": "価格", "値段": "価格", "料金": "価格", "cost": "価格", "rent": "家賃",
    "家賃": "家賃", "salary": "給料", "給料": "給料", "manager": "上司", "boss": "上司", "上司": "上司",
    "lead": "リーダー", "leads": "リーダー", "leader": "リーダー", "リーダー": "リーダー",
    "school": "学校", "学校": "学校", "university": "大学", "大学": "大学", "study": "勉強",
    "studying": "勉強", "勉強": "勉強", "english": "英語", "英語": "英語", "japanese": "日本語",
    "日本語": "日本語", "python": "python", "java": "java", "tokyo": "東京", "東京": "東京",
    "osaka": "大阪", "大阪": "大阪", "kyoto": "京都", "京都": "京都", "yokohama": "横浜", "横浜": "横浜",
    "nagoya": "名古屋", "名古屋": "名古屋", "fukuoka": "福岡", "福岡": "福岡", "sapporo": "札幌",
    "札幌": "札幌", "berlin": "ベルリン", "ベルリン": "ベルリン", "london": "ロンドン", "ロンドン": "ロンドン",
    "paris": "パリ", "パリ": "パリ", "seattle": "シアトル", "シアトル": "シアトル",
    "monday": "月曜", "月曜": "月曜", "tuesday": "火曜", "火曜": "火曜", "wednesday": "水曜",
    "水曜": "水曜", "thursday": "木曜", "木曜": "木曜", "friday": "金曜", "金曜": "金曜",
    "saturday": "土曜", "土曜": "土曜", "sunday": "日曜", "日曜": "日曜",
    "allergic": "アレルギー", "allergy": "アレルギー", "アレルギー": "アレルギー",
    "peanut": "ピーナッツ", "peanuts": "ピーナッツ", "ピーナッツ": "ピーナッツ", "sugar": "砂糖", "砂糖": "砂糖",
    "milk": "牛乳", "牛乳": "牛乳", "ミルク": "牛乳", "gluten": "グルテン", "グルテン": "グルテン",
    "remote": "リモート", "リモート": "リモート", "在宅": "リモート", "home": "自宅", "自宅": "自宅",
    "mac": "mac", "macbook": "mac", "windows": "windows", "linux": "linux", "iphone": "iphone",
    "android": "android", "slack": "slack", "jira": "jira", "postgres": "postgres", "mysql": "mysql",
    "aws": "aws", "gcp": "gcp", "azure": "azure",
}


# Concepts phrases carry, beyond single words (引っ越した: 引 and 越 alone say nothing).
_CONCEPT_PHRASES = (
    (re.compile(r"引っ越|引越|転居|住ん|住む|住ま|\b(?:[Mm]oved|[Rr]elocated) to (?:[A-Z]|a new (?:place|house|"
                r"home|apartment|flat))|\b(?:I|[Ww]e|[Tt]hey|[Hh]e|[Ss]he|[A-Z][a-z]+) (?:still )?(?:live|lives|lived|living)\s+"
                r"(?:in|at|near|with|on|by)\b"), "住"),
    (re.compile(r"転職|勤め|働い|働く|勤務|入社|\bjoined\b|\b(?:work|works|worked|working) (?:at|for|in|from)\b",
                _I), "勤"),
    (re.compile(r"飲ん|飲む|飲ま|飲み", _I), "飲"),
    (re.compile(r"吸っ|吸う|吸わ", _I), "煙"),
    (re.compile(r"通っ|通う|通わ", _I), "通"),
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


_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september",
           "october", "november", "december")
_VALUE_WORDS = frozenset(_WEEKDAYS + _MONTHS + tuple(d[:3] for d in _WEEKDAYS + _MONTHS)
                         + ("am", "pm", "noon", "midnight"))
_JA_VALUE = re.compile(r"^(?:[月火水木金土日]曜日?|毎週[月火水木金土日]曜日?)$")
# Counters and units: they say what sort of value, never which.
_JA_COUNTERS = frozenset("時分秒円万千百億日月年本錠度階回個人歳才件枚名号番週割"
                         "中的方後前上下内外用等毎全各同今次")  # and suffixes that carry no content
_NUMBER = re.compile(r"^[$¥€£]?\d[\d,.:/-]*(?:st|nd|rd|th|k|m|am|pm|%)?$", _I)


def _stem(w: str) -> str:
    if not w.isascii() or any(c.isdigit() for c in w):
        return w
    w = w.replace("’", "'")
    if w.endswith("'s"):
        w = w[:-2]
    for suffix in ("ing", "ies", "ed", "es", "s", "e", "y"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            return w[: -len(suffix)]
    return w


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


# A hiragana noun (えび, そば): two to four kana opening a phrase, before a particle or a
# kanji/katakana word. Most hiragana is grammar; these few are what the sentence is about.
_HIRA_NOUN = re.compile(r"(?:^|(?<=[のと、。\s]))([ぁ-ゖ][ぁ-ゖ]{1,3})(?=[のがをはもと]|[\u30a0-\u30ff\u4e00-\u9fff])")
_HIRA_STOP = frozenset("""これ それ あれ どれ ここ そこ あそこ こと もの ため よう とき ところ みんな わたし
うち あと まだ もう いつも とても ちょっと すごく やっぱり たぶん きょう あした きのう さっき いま
でも だけ まで から より ので のに けど ほど など なに なん どこ いつ だれ""".split())
_CONTRACTION = re.compile(r"['’](?:s|re|ll|ve|d|m)$")

# The thing a replacement names as the old one ("replaced Jenkins with ...", "from Vim to ...",
# "instead of driving", 「DatadogからLokiに」); "switched to decaf" names only the new one.
_REPLACE_OBJ = re.compile(
    r"\b(?:replaced|swapped|switched from|migrated from|moved from|changed from|instead of|"
    r"rather than|in place of|dropped|ditched|no longer (?:use|using|at|in|on))\s+(?:the\s+|our\s+|my\s+)?"
    r"([\w.+-]+(?:\s+[\w.+-]+)?)"
    r"|\bfrom\s+(?:the\s+|our\s+|my\s+)?([\w.+-]+(?:\s+[\w.+-]+)?)\s+(?:to|over to|into)\b"
    r"|([A-Za-z0-9.+-]+|[\u30a0-\u30ffー]+|[\u4e00-\u9fff々]+)(?:さん)?(?:から|をやめて)", _I)


# Places read as values: "I live in Tokyo" and "... in Osaka" say one thing with two values.
_PLACES = frozenset({"東京", "大阪", "京都", "横浜", "名古屋", "福岡", "札幌", "ベルリン", "ロンドン", "パリ",
                     "シアトル"})


def _split(words) -> tuple[frozenset[str], frozenset[str]]:
    frame_words, values = set(), set()
    for w in words:
        v = _value(w) or (_CONCEPTS.get(w.casefold()) if _CONCEPTS.get(w.casefold()) in _PLACES else None)
        if v is not None:
            values.add(v)
        elif not _EXPLICIT_TIME.fullmatch(w):
            frame_words.add(_stem(w))
    return frozenset(frame_words), frozenset(values)


@lru_cache(maxsize=65536)
def frame(text: str) -> Frame:
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
    plain = _strip(t, contrast + [m.span() for m in _INTERJECTION.finditer(t)])  # not the statement's negation
    replaced: set[str] = set()
    for m in _REPLACE_OBJ.finditer(t):
        obj = m.group(1) or m.group(2) or m.group(3) or ""
        replaced.update(_value(w) or _stem(w) for w in _content_words(obj))
    for start, end in contrast:  # "the 15th, not the 12th": the 12th is what is replaced
        replaced.update(_value(w) or _stem(w) for w in _content_words(_NOT_PREFIX.sub(" ", t[start:end])))
    # the statement comes first; a reason after it ("..., it was wrecking my sleep", 「…合わなく
    # なって」) does not flip it
    first = _SENTENCE.split(plain.strip(), 1)[0]
    negated = (len(_EN_NEG.findall(first)) + len(_JA_NEG.findall(first))) % 2 == 1
    scope = set()  # the negated clause: its subject and what the negator governs
    for m in _EN_SCOPE.finditer(first):
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
                parts = [t[m.end():end], t[start:m.start()], t[before:start]]
                if not m.group()[:1].isascii() or _PASSIVE.search(t[start:m.start()]):
                    parts[:2] = parts[1::-1]  # 「ジムはやめた」, "4.2 is scrapped": the thing comes first
                for part in parts:
                    found = _split(_content_words(_strip(part, _marker_spans(part) + _time_spans(part))))
                    if found[0] or found[1]:
                        stopped.append(found[0] | found[1])
                        break
    times = frozenset(_time_key(x) for x in _EXPLICIT_TIME.findall(t))
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
                 bool(_ALSO.search(t)), bool(re.search(f"[{CJK_CLASS}]", t)))


_SENTENCE = re.compile(r"(?<=[.!?;])\s+|[。！？]|\s[—–]\s")
_PASSIVE = re.compile(r"\b(?:is|are|was|were|been|be|got|get|gets|has been|have been)\s*$", _I)
_CLAUSE = re.compile(r"(?<!\d)\.|\.(?!\d)|[,;:!?—–()、。！？：；（）]+")  # 4.2 is one word


def _time_spans(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in _TIME_WORDS.finditer(text)]


def _time_key(text: str) -> str:
    """One spelling per explicit time: "July 18th" and "jul. 18" are "jul 18"."""
    words = text.casefold().replace(".", " ").split()
    if len(words) == 2 and words[0].isalpha():
        return f"{words[0][:3]} {re.sub(r'(?<=[0-9])(?:st|nd|rd|th)$', '', words[1])}"
    return " ".join(words)


def _marker_spans(text: str) -> list[tuple[int, int]]:
    return [m.span() for _sort, p in _MARKERS for m in p.finditer(text)]


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


# A capitalised first word names someone when a verb of being or doing follows it
# ("Ken lives", "Aisha is"); "Standup moves" and "Parking at" stay things.
_NAME_START = re.compile(
    r"\s*([A-Z][a-z]+)(?:'s|\s+(?:is|isn't|was|wasn't|has|had|hasn't|lives|lived|works|worked|leads|"
    r"led|got|goes|went|does|doesn't|did|didn't|drinks|walks|takes|took|became|chairs|moved|switched|"
    r"transferred|quit|stepped|joined|left|prefers|likes|loves|hates|can't|cannot|will|won't|"
    r"says|said|told|wants|needs|uses|used|runs|ran|started|stopped|\w+ed)\b)")
# Diego's birthday: a possessive names someone wherever it stands ("the Pixel's in a drawer" is
# "the Pixel is")
_POSSESSIVE = re.compile(r"\b([A-Z][a-z]+)['’]s\s+(?!(?:in|on|at|a|an|the|not|been|gone|got|now|still|back|"
                         r"over|out|off|up|down|here|there|fine|ok|okay|done|all|just|also|really)\b)\w")


def _holder(text: str) -> str:
    rel = _REL.search(text) or _JA_REL.search(text)
    if rel:
        return "rel:" + rel.group(1).casefold()
    names = {m.group(1).casefold() for m in _JA_NAME.finditer(text) if m.group(1) not in _JA_JOBS}
    names |= {m.group(1).casefold() for m in _POSSESSIVE.finditer(text)
              if m.group(1).casefold() not in _COMMON_START}
    first = _NAME_START.match(text)
    if first and first.group(1).casefold() not in _COMMON_START and not first.group(1).endswith("ly"):
        names.add(first.group(1).casefold())
    if names:
        return "name:" + ",".join(sorted(names))
    if _SELF.search(text):
        return "self"
    return "none"


def _holders_agree(a: str, b: str) -> bool:
    if a == b or "none" in (a, b):
        return True
    if a.startswith("name:") and b.startswith("name:"):
        x, y = set(a[5:].split(",")), set(b[5:].split(","))
        return bool({_romaji(n) for n in x} & {_romaji(n) for n in y})  # Ken is ケン
    return False


# Katakana to Hepburn romaji, enough for names written both ways (ケン, アヤ, ソフィア).
_KANA = dict(zip(
    "アイウエオカキクケコサシスセソタチツテトナニヌネノハヒフヘホマミムメモヤユヨラリルレロワヲン"
    "ガギグゲゴザジズゼゾダヂヅデドバビブベボパピプペポ",
    "a i u e o ka ki ku ke ko sa shi su se so ta chi tsu te to na ni nu ne no ha hi fu he ho "
    "ma mi mu me mo ya yu yo ra ri ru re ro wa o n ga gi gu ge go za ji zu ze zo da ji zu de do "
    "ba bi bu be bo pa pi pu pe po".split(), strict=True))
_SMALL = {"ャ": "ya", "ュ": "yu", "ョ": "yo", "ァ": "a", "ィ": "i", "ゥ": "u", "ェ": "e", "ォ": "o"}


# English spellings folded towards how Japanese writes a loanword (hackathon ハッカソン, Excel
# エクセル, fasting ファスティング): then both are reduced to their consonants.
_EN_SOUND = (("ph", "f"), ("th", "s"), ("ck", "k"), ("qu", "k"), ("x", "ks"), ("c", "k"), ("q", "k"),
             ("l", "r"), ("v", "b"), ("w", ""), ("y", ""), ("h", ""))


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


@dataclass(frozen=True, slots=True)
class Verdict:
    certain: bool  # True: supersede; False: open a conflict for a person
    rule: str  # negation | stop | cancel | replacement | value | role
    detail: str


def relation(old: str, new: str) -> Verdict | None:
    """Whether ``new`` (the later memory) updates ``old`` on the same frame, and how sure."""
    a, b = frame(old), _fresh(frame(old), frame(new))
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
        if frames and b.markers and a.holder == b.holder != "none" and not (a.words & b.words):
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
    a, b = frame(old), _fresh(frame(old), frame(new))
    if not _holders_agree(a.holder, b.holder) or (a.times and b.times and not (a.times & b.times)):
        return False
    if not (_matching(a.words, b.words) or a.concepts & b.concepts):
        return False  # nothing in common to update: a neighbour, not a new version
    if _STILL.search(new):
        return False  # "confirmed again", 「引き続き」: the same belief, said again
    values_differ = bool(a.values and b.values and a.values != b.values)
    # (a flipped negation alone is not enough here: "Friday deploys are off-limits" restates
    # "never deploy on Fridays"; the rules of relation() look at what the negator governs)
    return bool(b.markers & {"stop", "cancel", "replace"}) or (values_differ and bool(b.markers))


# Words that say a belief still holds: said again, not changed.
_STILL = re.compile(r"\b(?:still|again|as before|as usual|continues?|confirmed|reminded|reiterated|"
                    r"remains?|stays?|keeps?)\b|引き続き|相変わらず|改めて|再確認|変わらず", _I)


_RESCHEDULED = re.compile(r"\b(?:reschedul\w*|moved|postponed|pushed|changed|correction|wrong|not)\b|"
                          r"変更|延期|訂正|間違|勘違い|正しくは|ではなく|じゃなく", _I)


def _names(f: Frame) -> set[str]:
    return {_stem(n) for n in f.holder[5:].split(",")} if f.holder.startswith("name:") else set()


def _role_holder(a: Frame, b: Frame) -> Verdict | None:
    """Someone else now holds the role: the texts differ only in the names."""
    if not (a.role and b.role and b.markers and a.holder.startswith("name:") and b.holder.startswith("name:")):
        return None
    rest_a, rest_b = a.words - _names(a), b.words - _names(b)
    if rest_a and rest_a == rest_b:
        return Verdict(True, "role", f"new holder of {' '.join(sorted(rest_a))!r}")
    return None


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
        extra = scope - inside  # a Japanese verb stem (使 in 使ってない) may come along
        if shared and inside and (not extra or (len(extra) == 1 and len(next(iter(extra))) == 1 and not extra <= set("は"))):
            sure = bool(b.markers) or len(inside) >= 2
            return Verdict(sure, "negation", f"negation flips on {sorted(inside)[0]!r}")
        if not b.markers & {"stop", "cancel", "replace", "end"}:
            return None
    if "end" in b.markers and a.recurring:
        b = replace(b, markers=b.markers | {"stop"})
    if b.markers & {"stop", "cancel"}:
        # what is stopped is the old thing: most of what the stop word governs is in the old text
        for part in b.stopped:  # what each stop word governs
            hit = _matching(part, a.words) | {v for v in part & a.values if _identifier(v)}  # 4.2, not 5 or tue
            # most of what is stopped is in the old text, and it is much of what the old text says
            named = a.holder == b.holder and a.holder.startswith("name:")  # about one person
            if hit and len(hit) * 2 >= len(part) and (len(hit) * 3 >= len(a.words) or named):
                sort = "cancel" if "cancel" in b.markers else "stop"
                return Verdict(True, sort, f"{sort} of {sorted(hit)[0]!r}")
    gone = _matching(b.replaced, a.words) | (b.replaced & a.values)
    if "replace" in b.markers and gone and not (b.replaced & only_b) and (
            len(gone) * 4 >= len(a.words | a.values) or gone & a.values):  # "the 15th, not the 12th"
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
