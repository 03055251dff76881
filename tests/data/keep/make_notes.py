"""Generate the daily notes of the keep sets: the ordinary chatter between the hand-written items.

    python tests/data/keep/make_notes.py [--check]

Rewrites the "note" lines of every tests/data/keep/*/*/*.jsonl file from a seed derived from the
file's path, keeping every other line (facts, lookalikes, clusters) as it is, so the same command
always writes the same files. --check only says whether the files hold what it would write
(exit 1 when they do not). Only the notes are generated: facts, lookalikes, clusters and
questions are hand-written.

Notes are deliberately dull and varied: meetings, errands, builds, moods, plans. They name no
person, pet, host or port of the hand-written items, so a note never answers a question.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

# days of notes and notes per day, by set
SPAN = {"said_once": (120, (5, 9)), "same_subject": (None, (2, 4))}

EN = {
    "person": ["Jordan", "Casey", "Alex", "Morgan", "Riley", "Noor", "Quinn", "Jamie", "Taylor", "Kai",
               "Chris", "Devon", "Harper", "Nico", "Lena", "Omar", "Yusuf", "Greta", "Felix", "Bea"],
    "project": ["the onboarding revamp", "the Q3 roadmap", "the pricing page", "the data export",
                "the search filters", "the dashboard rewrite", "the mobile beta", "the partner portal", "the reporting job",
               "the notification emails", "the admin panel", "the audit tool", "the import wizard"],
    "thing": ["the flaky login test", "a null pointer in the exporter", "a timeout in the nightly job",
              "the lint step", "a broken snapshot test", "the docker build", "a typo in the config",
              "an off-by-one in pagination", "a race in the cache warmer", "the CSV parser", "the date picker"],
    "errand": ["picked up the dry cleaning", "bought groceries", "returned the parcel", "got the bike fixed",
               "posted the birthday card", "renewed the library books", "picked up a prescription for myself",
               "bought new running shoes", "took the recycling out", "topped up the travel card",
               "booked a haircut", "ordered a new kettle", "dropped off the old clothes at the charity shop"],
    "mood": ["tired", "pretty good", "a bit stressed", "relaxed", "distracted", "energised", "grumpy",
             "fine", "motivated", "sleepy", "anxious about the deadline", "in a good mood"],
    "food": ["pasta", "a burrito", "ramen", "a salad", "leftovers", "soup", "a sandwich", "curry", "sushi",
             "a wrap", "dumplings", "pizza"],
    "weather": ["rainy", "sunny", "windy", "freezing", "humid", "grey", "foggy", "mild", "stormy"],
    "time": ["10", "11", "11:30", "2", "2:30", "3", "4", "4:30"],
    "day": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"],
    "book": ["a detective novel", "a book on sourdough", "a biography of a chess player", "a sci-fi paperback",
             "a history of maps", "a short story collection"],
    "show": ["a documentary about octopuses", "a cooking show", "two episodes of a crime drama",
             "a football match", "an old western", "a stand-up special"],
    "num": [str(n) for n in range(2, 40)],
}
EN_T = [
    "Meeting with {person} about {project} ran over by {num} minutes",
    "Fixed {thing}, it was hiding behind a retry",
    "Build failed again on {thing}; rerun passed",
    "{errand} on the way home",
    "Feeling {mood} today",
    "Lunch: {food}",
    "Weather is {weather}, worked from home",
    "Plan for today: finish {project}, then review {person}'s PR",
    "1:1 with {person} at {time}, mostly about {project}",
    "Spent the morning chasing {thing}",
    "Wrote {num} tests for {project}",
    "{person} is out sick, covering their reviews",
    "Sync about {project} moved to {day} at {time}",
    "Coffee with {person}, talked about {project}",
    "Reading {book} before bed",
    "Watched {show}",
    "Need to remember to answer {person}'s email about {project}",
    "Demo of {project} went ok, {num} questions afterwards",
    "Slow day, {mood}",
    "Closed {num} tickets, inbox almost empty",
    "Pairing with {person} on {thing}",
    "{weather} again, skipped the run",
    "Went for a {num} minute walk at lunch",
    "Dinner was {food}, too much of it",
    "Blocked on {person} for {project}",
    "TODO: write up notes from the {project} meeting",
    "Reverted my change to {thing}, will try again {day}",
    "Code review backlog is {num} PRs",
    "Long call with {person}, {mood} afterwards",
    "{errand}, then cooked {food}",
    "The office was loud today, headphones on all afternoon",
    "Dentist reminder came in for next month, need to book",
    "Laptop restarted for updates in the middle of a call",
    "Read a blog post about {thing}, not very useful",
    "Estimated {project} at {num} points",
    "Planning poker for {project} took forever",
    "Ordered {food} for the team lunch",
    "Fire drill at {time}, everyone out in the {weather} weather",
    "Slept badly, {mood}",
    "Tried a new route to work, {num} minutes faster",
    "Cleaned up my desktop and archived {num} old branches",
    "Wrote the agenda for {day}'s meeting about {project}",
    "{person} shared a nice trick for debugging {thing}",
    "Cancelled the {time} meeting, nobody had updates",
    "Gym after work, legs day",
    "Finished {book}",
    "Bought a plant for the desk",
    "Phone battery dying all day, need a new cable",
    "Rebased {project} onto the latest main, {num} conflicts",
    "Got feedback from {person} on {project}: needs more tests",
]
JA = {
    "person": ["田村さん", "小川さん", "松本さん", "井口さん", "岡田さん", "藤井さん", "森田さん", "石川さん",
               "前田さん", "原さん", "大野さん", "野口さん", "千葉さん", "今井さん", "上野さん", "谷さん"],
    "project": ["新規登録画面の改修", "第3四半期のロードマップ", "料金ページ", "データ出力機能", "検索の絞り込み",
                "ダッシュボードの作り直し", "モバイルのベータ版", "取引先ポータル", "月次レポート", "通知メール",
                "管理画面", "インポート機能"],
    "thing": ["不安定なログインのテスト", "エクスポートのヌルポ", "夜間ジョブのタイムアウト", "lintのステップ",
              "壊れたスナップショットテスト", "dockerのビルド", "設定ファイルの誤字", "ページングのずれ",
              "キャッシュ更新の競合", "CSVパーサ", "日付ピッカー"],
    "errand": ["クリーニングを受け取った", "スーパーで買い物", "荷物を返品した", "自転車を修理に出した",
               "誕生日カードを投函した", "図書館の本を延長した", "新しいランニングシューズを買った",
               "資源ごみを出した", "交通系ICをチャージした", "美容院を予約した", "やかんを注文した",
               "古着を回収ボックスに入れた"],
    "mood": ["疲れ気味", "まあまあ", "ちょっとストレス", "のんびり", "集中できない", "元気", "不機嫌",
             "やる気がある", "眠い", "締め切りが不安", "機嫌がいい"],
    "food": ["パスタ", "ラーメン", "サラダ", "残り物", "味噌汁と焼き魚", "サンドイッチ", "カレー", "寿司",
             "餃子", "うどん", "親子丼", "ピザ"],
    "weather": ["雨", "晴れ", "風が強い", "寒い", "蒸し暑い", "曇り", "霧", "暖かい", "嵐"],
    "time": ["10時", "11時", "11時半", "14時", "14時半", "15時", "16時", "16時半"],
    "day": ["月曜", "火曜", "水曜", "木曜", "金曜"],
    "book": ["推理小説", "パン作りの本", "棋士の伝記", "SFの文庫本", "地図の歴史の本", "短編集"],
    "show": ["タコのドキュメンタリー", "料理番組", "刑事ドラマを2話", "サッカーの試合", "昔の時代劇", "お笑いの特番"],
    "num": [str(n) for n in range(2, 40)],
}
JA_T = [
    "{person}と{project}の打ち合わせ、{num}分延びた",
    "{thing}を直した、リトライの陰に隠れていた",
    "またビルドが{thing}で落ちた、再実行で通った",
    "帰りに{errand}",
    "今日は{mood}",
    "昼ごはんは{food}",
    "天気は{weather}、在宅勤務にした",
    "今日の予定：{project}を終わらせて、{person}のPRをレビュー",
    "{time}から{person}と1on1、ほぼ{project}の話",
    "午前中は{thing}の調査で終わった",
    "{project}のテストを{num}個書いた",
    "{person}が体調不良で休み、レビューを代わりにやる",
    "{project}の定例が{day}の{time}に移動",
    "{person}とコーヒー、{project}の話をした",
    "寝る前に{book}を読んでいる",
    "{show}を見た",
    "{person}の{project}のメールに返信するのを忘れないこと",
    "{project}のデモはまあまあ、質問が{num}個",
    "静かな一日、{mood}",
    "チケットを{num}件クローズ、受信箱がほぼ空",
    "{person}と{thing}をペアプロ",
    "また{weather}、ランニングはお休み",
    "昼休みに{num}分散歩",
    "夕飯は{food}、食べすぎた",
    "{project}は{person}待ちで止まっている",
    "TODO：{project}の会議メモをまとめる",
    "{thing}の変更を戻した、{day}にもう一度やる",
    "レビュー待ちのPRが{num}件",
    "{person}と長電話、そのあと{mood}",
    "{errand}、それから{food}を作った",
    "オフィスがうるさくて午後はずっとヘッドホン",
    "来月の歯医者のリマインダーが来た、予約しないと",
    "会議中にPCがアップデートで再起動した",
    "{thing}についてのブログを読んだ、あまり役に立たなかった",
    "{project}を{num}ポイントと見積もった",
    "{project}のプランニングポーカーが長引いた",
    "チームのランチに{food}を注文",
    "{time}に避難訓練、{weather}の中みんな外に出た",
    "よく眠れなかった、{mood}",
    "新しい道で出社したら{num}分早かった",
    "デスクトップを片付けて古いブランチを{num}本消した",
    "{day}の{project}の会議のアジェンダを書いた",
    "{person}に{thing}のデバッグのコツを教わった",
    "{time}の会議は中止、誰も報告がなかった",
    "仕事のあとジムで脚の日",
    "{book}を読み終えた",
    "机に置く観葉植物を買った",
    "スマホの電池が一日中もたない、ケーブルを買い替えたい",
    "{project}を最新のmainにリベース、コンフリクトが{num}個",
    "{person}から{project}にフィードバック：テストが足りない",
]


def seed_of(path: Path) -> int:
    return int(hashlib.sha256(path.relative_to(HERE).as_posix().encode()).hexdigest()[:12], 16)


def notes_for(path: Path, days: int) -> list[dict]:
    lang = path.stem
    vocab, templates = (EN, EN_T) if lang == "en" else (JA, JA_T)
    lo, hi = SPAN[path.parent.parent.name][1]
    rng = random.Random(seed_of(path))
    out, seen = [], set()
    for day in range(days):
        for _ in range(rng.randint(lo, hi)):
            for _try in range(20):  # a repeated text would be one memory reinforced, not a new note
                text = rng.choice(templates).format_map({k: rng.choice(v) for k, v in vocab.items()})
                if text not in seen:
                    break
            seen.add(text)
            out.append({"type": "note", "day": day, "text": text})
    return out


def rendered(path: Path) -> str:
    kept = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    kept = [r for r in kept if r["type"] != "note"]
    days = SPAN[path.parent.parent.name][0]
    if days is None:  # same_subject: notes run through the last day a cluster item is said
        days = 1 + max(i["day"] for r in kept if r["type"] == "cluster" for i in r["items"])
    lines = kept + notes_for(path, days)
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in lines)


def main(argv: list[str]) -> int:
    stale = []
    for path in sorted(HERE.glob("*/*/*.jsonl")):
        text = rendered(path)
        if path.read_text(encoding="utf-8") != text:
            stale.append(path)
            if "--check" not in argv:
                path.write_text(text, encoding="utf-8")
    if "--check" in argv and stale:
        print("stale: " + ", ".join(str(p.relative_to(HERE)) for p in stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
