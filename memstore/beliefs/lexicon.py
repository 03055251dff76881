"""The words the belief-update rules read (memstore.beliefs): update words by sort,
negators, time words, holders, stop words, single-valued frames, roles, and the small
bilingual concept list. Data and patterns only; memstore.beliefs.frame applies them."""

from __future__ import annotations

import re

from ..cjk import CJK_CLASS

# Case folds ASCII only: compiling IGNORECASE over the Unicode classes of CJK is slow, once per
# process (recall and consolidate import these), and NFKC has made digits and spaces ASCII.
_I = re.IGNORECASE | re.ASCII


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
             r"行かなくな|飲まなくな|食べなくな|吸わなくな|廃止|禁煙|禁酒|断念|諦め|終わりにし|おしまいにし"),
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


_RECURRING = re.compile(r"\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday) (?:mornings|afternoons|"
                        r"evenings|nights)\b|\bevery other\b|"
                        r"\b(?:every|each)\s+(?:day|week|month|morning|evening|night|monday|tuesday|wednesday|"
                        r"thursday|friday|saturday|sunday)|\b(?:weekly|daily|monthly|biweekly|mondays|tuesdays|"
                        r"wednesdays|thursdays|fridays|saturdays|sundays)\b|毎週|毎日|毎朝|毎晩|毎月|隔週", _I)


_MARKERS += (("end", _END),)


# A proposal, a question or a supposition states no new belief: "Should we move retro to
# Thursdays?", 「もし転職したら…かな」.
_TENTATIVE = re.compile(r"[?？]|\b(?:should we|shall we|what if|how about|could we|maybe|perhaps|might|"
                        r"thinking (?:of|about)|considering|wondering|suggest(?:ed|s|ion)?|propos(?:e|ed|al))\b"
                        r"|\bif\b[^.!?;。]*\b(?:would|could)\b"  # "if we moved to X, the limit would go up"
                        r"|(?:^|[、。\s])もし|かな[。、\s]|かな$|かも|検討|提案|どうか|しようか|したらどう", _I)


# Short forms people write for the same word in notes ("Prod DB" is "the production database").
_ABBREVIATIONS = {"db": "database", "dbs": "databases", "prod": "production", "pw": "password",
                  "pwd": "password", "repo": "repository", "repos": "repositories", "config": "configuration",
                  "env": "environment", "k8s": "kubernetes", "docs": "documentation", "doc": "documentation"}


# Where an English statement's subject ends: a copula, an auxiliary or a common verb (no
# parser: the first of these after the first word). A Japanese one ends at its first は or が.
_EN_VERB = re.compile(r"^(?:is|are|was|were|am|be|been|has|have|had|will|would|can|could|should|must|may|"
                      r"does|do|did|isn't|aren't|wasn't|weren't|hasn't|haven't|won't|can't|doesn't|don't|"
                      r"didn't|gets?|got|goes|went|runs?|ran|lives?|lived|works?|worked|costs?|uses?|used|"
                      r"takes?|took|starts?|opens?|closes?|needs?|keeps?|moved?|moves|holds?|speaks?|"
                      r"\w{3,}ed)$", _I)  # not "red", "need"
_PARTICLE = re.compile(r"^(?:up|down|to|in|on|at|for|from|with|by|of|into|over|off|out|back|"
                       r"because|since|after|before|and|but|so)$")
_DETERMINERS = frozenset({"the", "a", "an", "our", "my", "his", "her", "their", "its", "your", "this", "that"})
_PRONOUNS = frozenset({"i", "we", "they", "he", "she", "you", "it"})  # the verb comes next
_JA_TOPIC = re.compile(r"^(.{1,20}?)(?:は|が|、)")


# One occasion of a recurring practice ("this week", 「今週は」) is an exception, not a new
# rule; "from this week", 「今月から」 start one.
_ONE_OFF = re.compile(r"(?<!from )(?<!starting )(?<!since )(?<!as of )(?<!effective )"
                      r"\b(?:this|next|last) (?:week|weekend|month|time)\b|\btoday\b|\btonight\b"
                      r"|(?:今週|今日|今回|来週|先週|今月|今度)(?!から|以降|より)", _I)
# An occasion said to be the only one ("tonight only", 「来週の水曜だけ」, 「今月だけ」): an exception
# to whatever the older text says, practice or not.
_ONLY_ONCE = re.compile(r"\b(?:only|just)\s+(?:this|next|today|tonight|tomorrow)\b"
                        r"|\b(?:today|tonight|tomorrow|this \w+|next \w+)\s+only\b"
                        r"|(?:今週|今日|今回|来週|先週|今月|今度|今夜|今晩|明日)[^。、,.]{0,8}(?:だけ|のみ|限り)", _I)


# Words that only say "also": a second value that does not replace the first.
# "too" says "also" where it ends a clause ("I like tea too"), not before what it qualifies
# ("too much going on", "got way too pricey": more than enough)
_ALSO = re.compile(r"\b(?:also|too(?=\s*(?:[.,;:!?)\]]|$|(?:and|but|so|now|lol)\b))|as well|another|plus|"
                   r"in addition|besides|a second|one more|an additional|an extra)\b"
                   r"|も(?:よく|また|たまに|時々)?(?:好き|飲|食|使|行|する|やる|して|読|始め|習|書け|でき|話せ|弾け)"
                   r"|に加えて|のほかに|の他に|以外にも", _I)


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
_EN_SCOPE_NEGATOR = r"\bno\s+longer\b|\b(?:not|never|no|cannot)\b|n['’]t\b"
_EN_SCOPE = re.compile(rf"([^,.;:!?—–()]{{0,60}}?)(?:{_EN_SCOPE_NEGATOR})([^,.;:!?—–()]{{0,60}})", _I)
# Whether _EN_SCOPE can match at all: it tries every start and length before a negator (slow
# on a text without one); a match of it holds a match of this
_EN_SCOPED = re.compile(_EN_SCOPE_NEGATOR, _I)


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
    r"(?<![\d-])\d{4}-\d{2}(?:-\d{2})?(?![\d-])|\b(?:19|20)\d{2}\b|\bq[1-4]\b|(?:19|20)\d{2}年|第[1-4一二三四]四半期|"
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2}(?:st|nd|rd|th)?\b|"
    r"\d{1,2}月\d{1,2}日", _I)
# A year named relative to when it is said: "this year's plan" and "last year we skipped it"
# are about two years (both texts are said within a lookback of each other; "past year" is a span)
_RELATIVE_YEAR = re.compile(r"\b(this|last|next|previous)\s+year\b|(今年|去年|昨年|来年)", _I)
_YEAR_OFFSET = {"this": "+0", "last": "-1", "previous": "-1", "next": "+1", "今年": "+0", "去年": "-1", "昨年": "-1",
                "来年": "+1"}


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
_RECIPIENT = re.compile(r"\b(?:to|for|with|from|by|at|about|on|of|onto|into)\s+$", _I)
# "my sister Hannah", "our neighbour, Mr. Ito": the relative's name, said right after it
_APPOSITION = re.compile(r",?\s+(?:(?:Mr|Mrs|Ms|Dr)\.?\s+)?([A-Z][a-z]+)\b")


_JA_REL = re.compile(r"(姉|兄|妹|弟|母|父|妻|夫|嫁|旦那|息子|娘|友達|友人|上司|同僚|部長|課長|祖母|祖父|彼女|彼氏|家族|両親|"
                     r"後輩|先輩|部下|同期|知り合い|"
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


_WORD = re.compile(rf"[{CJK_CLASS}]+|[$¥€£]?[0-9]{{1,3}}(?:,[0-9]{{3}})+(?:\.[0-9]+)?"
                   r"|[$¥€£]?[a-zA-Z0-9][a-zA-Z0-9'’:.\-]*[a-zA-Z0-9]|[a-zA-Z0-9]")


# Kanji runs and katakana runs are words of their own (毎朝コーヒー is 毎朝 and コーヒー).
_KANJI_KATA = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff々〆]+|[\u30a0-\u30ffー]+")


# Roles: "X leads the team" -> "X is now the CTO" changes X's role; "Bob is the tech lead" ->
# "Alice is the tech lead now" changes who holds it.
_ROLE = re.compile(
    r"\b(?:lead|leads|leader|head|heads|manager|manages|director|cto|ceo|cfo|coo|vp|engineer|designer|"
    r"intern|owner|owns|chair|chairs|chairperson|captain|pm|admin|maintainer|on-call|oncall|in charge|"
    r"treasurer|secretary|president|coordinator|organizer|organiser|supervisor|coach|moderator|"
    r"representative|rep|point of contact|scrum master)\b"
    r"|リーダー|部長|課長|社長|担当|マネージャー|エンジニア|責任者|所属|異動|主任|係長|室長|取締役|常務|専務|役員|"
    r"デザイナー|リサーチャー|メンター|インターン|昇進|就任|転向|班長|会長|幹事|当番|委員長|理事長|会計係|書記|"
    r"代表|店長|院長|校長|主将|キャプテン|監督|議長|司会|窓口|\bpromoted\b|\bappointed\b", re.IGNORECASE)


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
    r"引っ越|引越|転居|移住|越して|暮らし|暮らす|アドレス|[\u4e00-\u9fff]{1,4}部(?![屋品分下])|"
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
    "煙草": "煙", "喫煙": "煙", "禁煙": "煙", "禁酒": "酒", "断酒": "酒", "gym": "ジム", "ジム": "ジム", "run": "走", "running": "走", "ラン": "走",
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
    (re.compile(r"引っ越|引越|転居|住ん|住む|住ま|暮らし|暮らす|(?<!追い)越してき|\b(?:[Mm]oved|[Rr]elocated) to (?:[A-Z]|a new (?:place|house|"
                r"home|apartment|flat))|\b(?:I|[Ww]e|[Tt]hey|[Hh]e|[Ss]he|[A-Z][a-z]+) (?:still )?(?:live|lives|lived|living)\s+"
                r"(?:in|at|near|with|on|by)\b"), "住"),
    (re.compile(r"転職|勤め|働い|働く|勤務|入社|\bjoined\b|\b(?:work|works|worked|working) (?:at|for|in|from)\b",
                _I), "勤"),
    (re.compile(r"飲ん|飲む|飲ま|飲み", _I), "飲"),
    (re.compile(r"吸っ|吸う|吸わ", _I), "煙"),
    (re.compile(r"通っ|通う|通わ", _I), "通"),
)


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


# A hiragana noun (えび, そば): two to four kana opening a phrase, before a particle or a
# kanji/katakana word. Most hiragana is grammar; these few are what the sentence is about.
_HIRA_NOUN = re.compile(r"(?:^|(?<=[のと、。\s]))([ぁ-ゖ][ぁ-ゖ]{1,3})(?=[のがをはもと]|[\u30a0-\u30ff\u4e00-\u9fff])")


_HIRA_STOP = frozenset("""これ それ あれ どれ ここ そこ あそこ こと もの ため よう とき ところ みんな わたし
うち あと まだ もう いつも とても ちょっと すごく やっぱり たぶん きょう あした きのう さっき いま
でも だけ まで から より ので のに けど ほど など なに なん どこ いつ だれ""".split())


_CONTRACTION = re.compile(r"['’](?:s|re|ll|ve|d|m)$")


# "my 2009 VW Golf", "a 2019 Nissan Leaf": a model year names the thing, not a time
_MODEL_YEAR = re.compile(r"\b((?i:my|our|his|her|their|the|a)\s+)(?:19|20)\d{2}(?=\s+[A-Z])")


# The thing a replacement names as the old one ("replaced Jenkins with ...", "from Vim to ...",
# "instead of driving", 「DatadogからLokiに」); "switched to decaf" names only the new one.
_REPLACE_OBJ = re.compile(
    r"\b(?:replaced|swapped|switched from|migrated from|moved from|changed from|instead of|"
    r"rather than|in place of|dropped|ditched|no longer (?:use|using|at|in|on))\s+(?:the\s+|our\s+|my\s+)?"
    r"(?P<obj>[\w.+-]+(?:\s+[\w.+-]+)?)"
    r"|\bfrom\s+(?:the\s+|our\s+|my\s+)?(?P<source>[\w.+-]+(?:\s+[\w.+-]+)?)\s+(?:to|over to|into)\b"
    r"|(?P<ja>[A-Za-z0-9.+-]+|[\u30a0-\u30ffー]+|[\u4e00-\u9fff々]+)(?:さん)?(?:から|をやめて)"
    # what was given up for the new thing, named as one's own or as the one known: "traded in
    # the Golf", "sold my old bike", "passed the Garmin on" (not "sold 40 licenses", "passed the exam")
    r"|\b(?:traded in|sold|gave away|got rid of|handed down|donated)\s+(?:(?:the|our|my|old)\s+)+"
    r"(?P<given>[\w.+-]+(?:\s+[\w.+-]+)?)"
    r"|\bpassed\s+(?:(?:the|our|my|old)\s+)+(?P<passed>[\w.+-]+(?:\s+[\w.+-]+){0,3}?)"
    r"\s+(?:on\s+to|on(?=\s*(?:[.!,;]|$))|along|down\s+to)\b"
    r"|\b(?:the|my|our)\s+(?P<drawer>[\w.+-]+)(?:'s|\s+is)\s+(?:in a drawer|gathering dust)\b", _I)


# Places read as values: "I live in Tokyo" and "... in Osaka" say one thing with two values.
_PLACES = frozenset({"東京", "大阪", "京都", "横浜", "名古屋", "福岡", "札幌", "ベルリン", "ロンドン", "パリ",
                     "シアトル"})


_SENTENCE = re.compile(r"(?<=[.!?;])\s+|[。！？]|\s[—–]\s")


_PASSIVE = re.compile(r"\b(?:is|are|was|were|been|be|got|get|gets|has been|have been)\s*$", _I)


_CLAUSE = re.compile(r"(?<!\d)\.|\.(?!\d)|[,;:!?—–()、。！？：；（）]+")  # 4.2 is one word


# A capitalised first word names someone when a verb of being or doing follows it
# ("Ken lives", "Aisha is"); "Standup moves" and "Parking at" stay things.
# The speaker's own things, after someone else's name in one clause: "Doctor changed my meds"
# (not "Aisha doesn't want weekend shifts, she told me").
_MINE = re.compile(r"[^,;:.!?—]*?\b(?:my|our)\b", _I)
_BEING = re.compile(r"(?:'s|\s+(?:is|isn't|was|wasn't|has|had|hasn't|will|won't|can't|cannot|became))\b", _I)
_NAME_START = re.compile(
    r"\s*([A-Z][a-z]+)(?:'s|\s+(?:is|isn't|was|wasn't|has|had|hasn't|lives|lived|works|worked|leads|"
    r"led|got|goes|went|does|doesn't|did|didn't|drinks|walks|takes|took|became|chairs|moved|switched|"
    r"transferred|quit|stepped|joined|left|prefers|likes|loves|hates|can't|cannot|will|won't|"
    r"says|said|told|wants|needs|uses|used|runs|ran|started|stopped|\w+ed)\b)")


# Diego's birthday: a possessive names someone wherever it stands ("the Pixel's in a drawer" is
# "the Pixel is")
# Tanaka-san, Sato-sensei: a name with a Japanese honorific written in Latin letters
_HONORIFIC = re.compile(r"\b([A-Z][a-z]+)-(?:san|sama|kun|chan|sensei|senpai)\b")


_POSSESSIVE = re.compile(r"\b([A-Z][a-z]+)['’]s\s+(?!(?:in|on|at|a|an|the|not|been|gone|got|now|still|back|"
                         r"over|out|off|up|down|here|there|fine|ok|okay|done|all|just|also|really)\b)\w")


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
