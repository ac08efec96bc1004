#!/usr/bin/python3
"""Builds tests/data/gcloud/tasks/<task>.json, the per-task GoogleSQL corpora
of the eight Toolathlon google-cloud tasks, from a Toolathlon checkout.

    build.py GIT_DIR [COMMIT]     (default commit: the one named in SOURCE)

Each file holds
- "source": the repository, commit and task folder the data and statements come from;
- "setup": GoogleCloudData (mcpbox's tables[].rows extension); a table may carry
  "data" (rows as lists in field order) instead of "rows" to stay small: the
  corpus runners turn them into row objects;
- "cases": run in order against project test-proj. Each names "src" (file:line
  in the task folder, or docs/task.md for what the task text asks an agent to
  write), "kind" (preprocess / evaluation / test (the task's own grader test,
  run through the MCP tool) / task (the text's ask)), "sql", and either "rows"
  (optionally "unordered": true when the statement has no ORDER BY),
  "rows_within" + "row_count" (a LIMIT without ORDER BY: so many rows, each one
  of the table's), or "error" (a substring of BigQuery's message).

The data are excerpts of the task's own files; the expected rows are worked
out here in plain Python from those excerpts (never from mcpbox's output) and,
where the task ships a ground truth (ab-testing's expected_ratio.csv,
academic-warning's expected_alerts.csv, price-comparison's ground-truth CSV,
machine-operating's anomaly_report.csv, live-transactions' investigation
report), checked against it. The SQL is the scripts' text with their Python
placeholders filled in (the project is test-proj, "today" is 2025-08-19)."""
import csv
import io
import json
import math
import os
import statistics
import subprocess
import sys

SOURCE = {"repo": "Klavis-AI/Toolathlon", "commit": "45d20b06774203568021fd4dad7c2d9935b66f0d"}
HERE = os.path.dirname(os.path.abspath(__file__))
GIT = None
COMMIT = None
TODAY = "2025-08-19"
DAY = TODAY.replace("-", "")


def show(task, path):
    return subprocess.run(["git", "--git-dir", GIT, "show", f"{COMMIT}:tasks/finalpool/{task}/{path}"],
                          check=True, capture_output=True).stdout.decode("utf-8-sig")


def read_csv(task, path):
    return list(csv.DictReader(io.StringIO(show(task, path))))


def near(a, b, eps=1e-9):
    return abs(a - b) <= eps * max(1.0, abs(a), abs(b))


def sql_str(s):
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"


def bq_round(x, n=0):
    """ROUND as BigQuery does it: half away from zero."""
    m = 10 ** n
    v = abs(x) * m
    r = math.floor(v + 0.5)
    if abs(v + 0.5 - r) < 1e-9 and r - v > 0.5:  # guard for binary noise
        r -= 1
    return math.copysign(r / m, x)


def table(ds, name, fields, data):
    return {"dataset_id": ds, "id": name,
            "fields": [{"name": n, "type": t} for n, t in fields], "data": data}


def write(task, setup, cases, about):
    for c in cases:
        c["sql"] = c["sql"].strip("\n")
    doc = {"about": about, "source": dict(SOURCE, commit=COMMIT, task=f"tasks/finalpool/{task}"),
           "setup": setup, "cases": cases}
    path = os.path.join(HERE, f"{task}.json")
    with open(path, "w") as f:
        # one table row / one case per line keeps the files reviewable
        f.write("{\n")
        f.write(f' "about": {json.dumps(about)},\n "source": {json.dumps(doc["source"])},\n')
        f.write(' "setup": {"datasets": ' + json.dumps(setup["datasets"]) + ', "tables": [\n')
        for i, t in enumerate(setup["tables"]):
            head = {k: v for k, v in t.items() if k != "data"}
            f.write("  " + json.dumps(head)[:-1] + ', "data": [\n')
            f.write(",\n".join("   " + json.dumps(r) for r in t["data"]))
            f.write("]}" + ("," if i + 1 < len(setup["tables"]) else "") + "\n")
        f.write(' ]},\n "cases": [\n')
        f.write(",\n".join("  " + json.dumps(c) for c in cases))
        f.write("\n ]\n}\n")
    print(f"{path}: {len(cases)} cases")


# ------------------------------------------------------------ game-statistics

def game_statistics():
    task = "game-statistics"
    # preprocess/main.py generates random players; this is a fixed, smaller set
    # of the same shape: ids player_NNN, regions, per-game online/task scores,
    # game ids game_NNN_GG_YYYYMMDD, plus a game on the day before.
    regions = ["NA", "EU", "ASIA", "SA", "OCE"]
    stream = []
    for p in range(1, 13):
        games = 3 + p % 4
        for g in range(games):
            online = (p * 37 + g * 11) % 90 + 10
            taskp = (p * 53 + g * 7) % 60 + 5
            stream.append([f"player_{p:03d}", regions[p % 5], {"online_score": online, "task_score": taskp},
                           f"game_{p:03d}_{g:02d}_{DAY}", f"{TODAY} {8 + g:02d}:{(p * 7) % 60:02d}:00"])
    # as the generator does: a player whose total repeats another's gets the
    # difference added to the last game's task_score
    seen, last = set(), {}
    for r in stream:
        last[r[0]] = r
    for pid in sorted(last):
        tot = sum(r[2]["online_score"] + r[2]["task_score"] for r in stream if r[0] == pid)
        off = 0
        while tot + off in seen:
            off += 1
        last[pid][2]["task_score"] += off
        seen.add(tot + off)
    stream.append(["player_001", "EU", {"online_score": 999, "task_score": 999}, "game_001_00_20250818",
                   "2025-08-18 23:59:59"])
    hist = []
    for d in range(10, 0, -1):
        day = f"2025-08-{19 - d:02d}"
        if day == "2025-08-13":
            continue  # a gap the integrity query reports as day_gap 2
        for p in range(1, 4 + d % 3):
            hist.append([f"player_{p:03d}", regions[p % 5], day, p * d, d, p * d + d, 1 + (p + d) % 5])
    setup = {"datasets": [{"id": "game_analytics", "description": "Game analytics dataset for player scores and leaderboards"}],
             "tables": [
                 {"dataset_id": "game_analytics", "id": "daily_scores_stream", "fields": [
                     {"name": "player_id", "type": "STRING", "mode": "REQUIRED"},
                     {"name": "player_region", "type": "STRING", "mode": "NULLABLE"},
                     {"name": "scores", "type": "RECORD", "mode": "NULLABLE", "fields": [
                         {"name": "online_score", "type": "INTEGER"}, {"name": "task_score", "type": "INTEGER"}]},
                     {"name": "game_id", "type": "STRING", "mode": "REQUIRED"},
                     {"name": "timestamp", "type": "TIMESTAMP", "mode": "REQUIRED"}], "data": stream},
                 {"dataset_id": "game_analytics", "id": "player_historical_stats", "fields": [
                     {"name": "player_id", "type": "STRING", "mode": "REQUIRED"},
                     {"name": "player_region", "type": "STRING", "mode": "NULLABLE"},
                     {"name": "date", "type": "DATE", "mode": "REQUIRED"},
                     {"name": "total_online_score", "type": "INTEGER"},
                     {"name": "total_task_score", "type": "INTEGER"},
                     {"name": "total_score", "type": "INTEGER", "description": "Total score for the day (online + task)"},
                     {"name": "game_count", "type": "INTEGER"}], "data": hist}]}
    today = [r for r in stream if r[4].startswith(TODAY)]
    per = {}
    for r in today:
        t = per.setdefault(r[0], {"score": 0, "online": 0, "task": 0, "n": 0, "region": r[1]})
        t["score"] += r[2]["online_score"] + r[2]["task_score"]
        t["online"] += r[2]["online_score"]
        t["task"] += r[2]["task_score"]
        t["n"] += 1
    by_score = sorted(per.items(), key=lambda kv: -kv[1]["score"])
    assert len({v["score"] for v in per.values()}) == len(per), "totals must be distinct"
    dates = sorted({h[2] for h in hist}, reverse=True)
    cases = []
    C = cases.append
    C({"src": "preprocess/main.py:338", "kind": "preprocess", "sql": f"""
            SELECT COUNT(*) as total_rows, 
                   COUNT(DISTINCT player_id) as unique_players,
                   DATE(timestamp) as data_date
            FROM `test-proj.game_analytics.daily_scores_stream`
            WHERE DATE(timestamp) = '{TODAY}'
            GROUP BY DATE(timestamp)
            """, "fields": ["total_rows:INTEGER", "unique_players:INTEGER", "data_date:DATE"],
       "rows": [[len(today), len(per), TODAY]]})
    C({"src": "preprocess/main.py:379", "kind": "preprocess", "sql": """
            SELECT COUNT(*) as total_rows, 
                   COUNT(DISTINCT date) as unique_dates,
                   MIN(date) as earliest_date,
                   MAX(date) as latest_date
            FROM `test-proj.game_analytics.player_historical_stats`
            """, "fields": ["total_rows:INTEGER", "unique_dates:INTEGER", "earliest_date:DATE", "latest_date:DATE"],
       "rows": [[len(hist), len(dates), min(dates), max(dates)]]})
    # what docs/task.md asks: leaderboard_YYYYMMDD (top 100 with player_id,
    # total_score, rank) and one player_historical_stats row per player
    lb = [[pid, v["score"], i + 1] for i, (pid, v) in enumerate(by_score)]
    C({"src": "docs/task.md", "kind": "task", "sql": f"""
CREATE TABLE `game_analytics.leaderboard_{DAY}` AS
SELECT player_id, SUM(scores.online_score + scores.task_score) AS total_score,
       RANK() OVER (ORDER BY SUM(scores.online_score + scores.task_score) DESC) AS rank
FROM `game_analytics.daily_scores_stream`
WHERE DATE(timestamp) = '{TODAY}'
GROUP BY player_id
ORDER BY total_score DESC
LIMIT 100""", "rows": []})
    C({"src": "evaluation/main.py:90", "kind": "evaluation", "sql": f"""
            SELECT player_id, total_score, rank
            FROM `game_analytics.leaderboard_{DAY}`
            ORDER BY rank
        """, "fields": ["player_id:STRING", "total_score:INTEGER", "rank:INTEGER"], "rows": lb})
    C({"src": "docs/task.md", "kind": "task", "sql": f"""
CREATE OR REPLACE TABLE game_analytics.leaderboard_{DAY} AS
SELECT player_id, total_score, ROW_NUMBER() OVER (ORDER BY total_score DESC, player_id) AS rank
FROM (
  SELECT player_id, SUM(scores.online_score) + SUM(scores.task_score) AS total_score
  FROM game_analytics.daily_scores_stream
  WHERE timestamp >= TIMESTAMP('{TODAY}') AND timestamp < TIMESTAMP_ADD(TIMESTAMP('{TODAY}'), INTERVAL 1 DAY)
  GROUP BY player_id)
QUALIFY rank <= 100;
SELECT COUNT(*) AS n, MIN(rank) AS first_rank, MAX(total_score) AS top FROM game_analytics.leaderboard_{DAY}""",
       "fields": ["n:INTEGER", "first_rank:INTEGER", "top:INTEGER"], "rows": [[len(lb), 1, lb[0][1]]]})
    C({"src": "docs/task.md", "kind": "task", "sql": f"""
INSERT INTO `game_analytics.player_historical_stats`
  (player_id, player_region, date, total_online_score, total_task_score, total_score, game_count)
SELECT player_id, ANY_VALUE(player_region), DATE(timestamp), SUM(scores.online_score), SUM(scores.task_score),
       SUM(scores.online_score + scores.task_score), COUNT(*)
FROM `game_analytics.daily_scores_stream`
WHERE DATE(timestamp) = DATE '{TODAY}'
GROUP BY player_id, DATE(timestamp)""", "rows": []})
    C({"src": "evaluation/main.py:316", "kind": "evaluation", "sql": f"""
            SELECT player_id, total_score, game_count
            FROM `game_analytics.player_historical_stats`
            WHERE date = '{TODAY}'
            ORDER BY player_id
        """, "rows": [[pid, v["score"], v["n"]] for pid, v in sorted(per.items())]})
    C({"src": "evaluation/main.py:339", "kind": "evaluation", "sql": f"""
            SELECT
                player_id,
                SUM(scores.online_score + scores.task_score) as total_score,
                COUNT(*) as game_count
            FROM `game_analytics.daily_scores_stream`
            WHERE DATE(timestamp) = '{TODAY}'
            GROUP BY player_id
            ORDER BY player_id
        """, "fields": ["player_id:STRING", "total_score:INTEGER", "game_count:INTEGER"],
       "rows": [[pid, v["score"], v["n"]] for pid, v in sorted(per.items())]})
    C({"src": "evaluation/main.py:133", "kind": "evaluation", "sql": f"""
            SELECT
                player_id,
                SUM(scores.online_score + scores.task_score) as total_score
            FROM `game_analytics.daily_scores_stream`
            WHERE DATE(timestamp) = '{TODAY}'
            GROUP BY player_id
            ORDER BY total_score DESC
            LIMIT 100
        """, "rows": [[pid, v["score"]] for pid, v in by_score[:100]]})
    counts = {}
    for h in hist + [[pid, None, TODAY] for pid in per]:
        counts.setdefault(h[2], set()).add(h[0])
    rows = []
    days = sorted(counts, reverse=True)
    for i, d in enumerate(days):
        n = sum(1 for h in hist if h[2] == d) + (len(per) if d == TODAY else 0)
        gap = None
        if i > 0:
            from datetime import date
            gap = (date.fromisoformat(days[i - 1]) - date.fromisoformat(d)).days
        rows.append([d, n, len(counts[d]), gap])
    C({"src": "evaluation/main.py:227", "kind": "evaluation", "sql": """
        WITH daily_counts AS (
            SELECT
                date,
                COUNT(*) as record_count,
                COUNT(DISTINCT player_id) as unique_players
            FROM `game_analytics.player_historical_stats`
            GROUP BY date
            ORDER BY date DESC
        ),
        date_gaps AS (
            SELECT
                date,
                LAG(date) OVER (ORDER BY date DESC) as prev_date,
                DATE_DIFF(LAG(date) OVER (ORDER BY date DESC), date, DAY) as day_gap
            FROM daily_counts
        )
        SELECT
            dc.*,
            dg.day_gap
        FROM daily_counts dc
        LEFT JOIN date_gaps dg ON dc.date = dg.date
        ORDER BY dc.date DESC
        """, "fields": ["date:DATE", "record_count:INTEGER", "unique_players:INTEGER", "day_gap:INTEGER"],
       "rows": rows})
    have = {h[2] for h in hist}
    span = sorted(have)
    from datetime import date, timedelta
    d0, d1 = date.fromisoformat(span[0]), date.fromisoformat(span[-1])
    missing = [str(d0 + timedelta(days=k)) for k in range((d1 - d0).days + 1) if str(d0 + timedelta(days=k)) not in have]
    C({"src": "evaluation/main.py:227", "kind": "task", "sql": f"""
SELECT day
FROM UNNEST(GENERATE_DATE_ARRAY(DATE '{span[0]}', DATE_SUB(DATE '{TODAY}', INTERVAL 1 DAY))) AS day
WHERE day NOT IN (SELECT DISTINCT date FROM `game_analytics.player_historical_stats`)
ORDER BY day""", "fields": ["day:DATE"], "rows": [[m] for m in missing]})
    # test_enhanced_evaluation.py drives the same checks through bigquery_run_query
    C({"src": "test_enhanced_evaluation.py:41", "kind": "test", "sql": f"""
            SELECT 
                player_id,
                SUM(scores.online_score + scores.task_score) as total_score
            FROM `game_analytics.daily_scores_stream`
            WHERE DATE(timestamp) = '{TODAY}'
            GROUP BY player_id
            ORDER BY total_score DESC
            LIMIT 110
            """, "rows": [[pid, v["score"]] for pid, v in by_score[:110]]})
    C({"src": "test_enhanced_evaluation.py:63", "kind": "test", "sql": f"""
            CREATE OR REPLACE TABLE `game_analytics.leaderboard_{DAY}` (
                player_id STRING,
                total_score INTEGER,
                rank INTEGER
            )
            """, "rows": []})
    wrong = [[pid, v["score"] + (100 if i < 10 else 0), i + 1] for i, (pid, v) in enumerate(by_score[:100])]
    values = ",\n    ".join(f"('{p}', {s}, {r})" for p, s, r in wrong)
    C({"src": "test_enhanced_evaluation.py:184", "kind": "test", "sql": f"""
            INSERT INTO `game_analytics.{'leaderboard_' + DAY}` (player_id, total_score, rank)
            VALUES
                {values}
            """, "rows": []})
    C({"src": "evaluation/main.py:90", "kind": "evaluation", "sql": f"""
            SELECT player_id, total_score, rank
            FROM `game_analytics.leaderboard_{DAY}`
            ORDER BY rank
        """, "fields": ["player_id:STRING", "total_score:INTEGER", "rank:INTEGER"], "rows": wrong})
    C({"src": "test_enhanced_evaluation.py:200", "kind": "test", "sql": f"""
            SELECT 
                player_id,
                SUM(scores.online_score + scores.task_score) as total_score,
                COUNT(*) as game_count
            FROM `game_analytics.daily_scores_stream`
            WHERE DATE(timestamp) = '{TODAY}'
            GROUP BY player_id
            """, "unordered": True, "rows": [[pid, v["score"], v["n"]] for pid, v in per.items()]})
    C({"src": "test_enhanced_evaluation.py:218", "kind": "test", "sql": f"""
            DELETE FROM `game_analytics.player_historical_stats`
            WHERE date = '{TODAY}'
            """, "rows": []})
    values = ",\n    ".join(f"('{pid}', 'US', '{TODAY}', 0, {v['score']}, {v['score']}, {v['n']})"
                            for pid, v in per.items())
    C({"src": "test_enhanced_evaluation.py:235", "kind": "test", "sql": f"""
                INSERT INTO `game_analytics.player_historical_stats` 
                (player_id, player_region, date, total_online_score, total_task_score, total_score, game_count)
                VALUES
                    {values}
                """, "rows": []})
    C({"src": "evaluation/main.py:316", "kind": "evaluation", "sql": f"""
            SELECT player_id, total_score, game_count
            FROM `game_analytics.player_historical_stats`
            WHERE date = '{TODAY}'
            ORDER BY player_id
        """, "rows": [[pid, v["score"], v["n"]] for pid, v in sorted(per.items())]})
    C({"src": "test_enhanced_evaluation.py:253", "kind": "test",
       "sql": f"DROP TABLE IF EXISTS `game_analytics.leaderboard_{DAY}`", "rows": []})
    C({"src": "evaluation/main.py:90", "kind": "evaluation", "sql": f"""
            SELECT player_id, total_score, rank
            FROM `game_analytics.leaderboard_{DAY}`
            ORDER BY rank
        """, "error": f"Not found: Table test-proj:game_analytics.leaderboard_{DAY}"})
    write(task, setup, cases, "game-statistics: a fixed set of players shaped as preprocess/main.py generates "
          "them (today = 2025-08-19, one game on the day before, a gap in the history); the preprocess and "
          "evaluation queries verbatim, test_enhanced_evaluation.py's statements (run through the MCP tool "
          "upstream), and the leaderboard / history statements docs/task.md asks for.")


# ---------------------------------------------------------------- ab-testing

def ab_testing():
    task = "ab-testing"
    names = ["Appliances", "Books", "Sports"]
    truth = {r["scenario"]: r for r in read_csv(task, "groundtruth_workspace/expected_ratio.csv")}
    fields = [("time_window", "STRING"), ("A_clicks", "INTEGER"), ("A_store_views", "INTEGER"),
              ("B_clicks", "INTEGER"), ("B_store_views", "INTEGER")]
    tables, sums = [], {}
    for n in names:
        rows = read_csv(task, f"files/ab_{n}.csv")
        data = [[r["time_window"], int(r["A_clicks"]), int(r["A_store_views"]), int(r["B_clicks"]),
                 int(r["B_store_views"])] for r in rows]
        tables.append(table("ab_testing", f"ab_{n}", fields, data))
        s = [sum(d[k] for d in data) for k in range(1, 5)]
        sums[n] = s
        a, b = bq_round(s[1] / s[0] * 100, 3), bq_round(s[3] / s[2] * 100, 3)
        assert f"{a:.3f}%" == truth[n]["A_conversion %"] and f"{b:.3f}%" == truth[n]["B_conversion %"], n
    setup = {"datasets": [{"id": "ab_testing", "description": "A/B testing dataset for conversion rate analysis",
                           "location": "US"}], "tables": tables}
    cases = []
    C = cases.append
    C({"src": "docs/task.md", "kind": "task",
       "sql": "SELECT table_name FROM `test-proj.ab_testing.INFORMATION_SCHEMA.TABLES` ORDER BY table_name",
       "rows": [[f"ab_{n}"] for n in names]})
    C({"src": "docs/task.md", "kind": "task", "sql": """
SELECT column_name, data_type FROM ab_testing.INFORMATION_SCHEMA.COLUMNS
WHERE table_name = 'ab_Books' ORDER BY ordinal_position""",
       "rows": [[f, {"STRING": "STRING", "INTEGER": "INT64"}[t]] for f, t in fields]})
    for n in names[:2]:
        C({"src": "docs/task.md", "kind": "task", "sql": f"""
SELECT ROUND(SUM(A_store_views) / SUM(A_clicks) * 100, 3) AS A_conversion,
       ROUND(SUM(B_store_views) / SUM(B_clicks) * 100, 3) AS B_conversion
FROM `test-proj.ab_testing.ab_{n}`""", "fields": ["A_conversion:FLOAT", "B_conversion:FLOAT"],
           "rows": [[float(truth[n]["A_conversion %"][:-1]), float(truth[n]["B_conversion %"][:-1])]]})
    C({"src": "docs/task.md", "kind": "task", "sql": """
SELECT _TABLE_SUFFIX AS scenario,
       FORMAT('%.3f%%', 100 * SAFE_DIVIDE(SUM(A_store_views), SUM(A_clicks))) AS a_pct,
       FORMAT('%.3f%%', 100 * SAFE_DIVIDE(SUM(B_store_views), SUM(B_clicks))) AS b_pct
FROM `ab_testing.ab_*`
GROUP BY 1
ORDER BY 1""", "fields": ["scenario:STRING", "a_pct:STRING", "b_pct:STRING"],
       "rows": [[n, truth[n]["A_conversion %"], truth[n]["B_conversion %"]] for n in names]})
    tot = [sum(sums[n][k] for n in names) for k in range(4)]
    C({"src": "docs/task.md", "kind": "task", "sql": """
SELECT ROUND(100 * SUM(A_store_views) / SUM(A_clicks), 3) AS a_overall,
       ROUND(100 * SUM(B_store_views) / SUM(B_clicks), 3) AS b_overall
FROM (SELECT * FROM ab_testing.ab_Appliances UNION ALL SELECT * FROM ab_testing.ab_Books
      UNION ALL SELECT * FROM ab_testing.ab_Sports)""",
       "rows": [[bq_round(100 * tot[1] / tot[0], 3), bq_round(100 * tot[3] / tot[2], 3)]]})
    ra = [sums[n][1] / sums[n][0] for n in names]
    rb = [sums[n][3] / sums[n][2] for n in names]
    ma, mb = sum(ra) / len(ra), sum(rb) / len(rb)
    C({"src": "docs/task.md", "kind": "task", "sql": """
WITH per_scenario AS (
  SELECT _TABLE_SUFFIX AS scenario,
         SUM(A_store_views) / SUM(A_clicks) AS a_rate,
         SUM(B_store_views) / SUM(B_clicks) AS b_rate
  FROM `test-proj.ab_testing.ab_*`
  GROUP BY scenario)
SELECT AVG(a_rate) AS a_mean, AVG(b_rate) AS b_mean,
       CASE WHEN AVG(b_rate) > AVG(a_rate) THEN 'B' ELSE 'A' END AS winner,
       COUNTIF(b_rate > a_rate) AS b_wins
FROM per_scenario""", "fields": ["a_mean:FLOAT", "b_mean:FLOAT", "winner:STRING", "b_wins:INTEGER"],
       "rows": [[ma, mb, "B" if mb > ma else "A", sum(1 for a, b in zip(ra, rb) if b > a)]]})
    first = tables[1]["data"]
    C({"src": "docs/task.md", "kind": "task", "sql": """
SELECT time_window, A_clicks, A_store_views, SAFE_DIVIDE(A_store_views, A_clicks) AS a_rate
FROM ab_testing.ab_Books
WHERE STARTS_WITH(time_window, '7/29 0')
ORDER BY time_window
LIMIT 3""", "rows": [[d[0], d[1], d[2], d[2] / d[1] if d[1] else None]
                     for d in sorted(x for x in first if x[0].startswith("7/29 0"))[:3]]})
    write(task, setup, cases, "ab-testing: three of the task's twenty scenario tables (files/ab_*.csv, as "
          "preprocess/ggcloud_upload.py loads them with autodetect), and the statements docs/task.md asks "
          "for (per-scenario and overall conversion rates, the mean of the per-scenario rates deciding "
          "the winner); the per-scenario rates equal groundtruth_workspace/expected_ratio.csv. The "
          "preprocess and evaluation scripts run no SQL (loads, buckets and logs only).")


# ---------------------------------------------------------- academic-warning

def academic_warning():
    task = "academic-warning"
    fields = [("student_id", "STRING"), ("name", "STRING"), ("class_id", "STRING"), ("score", "FLOAT")]
    tables, allrows = [], []
    sfx = ["2501", "2502", "2503", "2504", "2505", "2506", "2507"]
    for s in sfx:
        data = [[r["student_id"], r["name"], r["class_id"], float(r["score"])]
                for r in read_csv(task, f"files/scores_{s}.csv")]
        tables.append(table("academic_warning", f"scores_{s}", fields, data))
        allrows += [(s, d) for d in data]
    setup = {"datasets": [{"id": "academic_warning", "location": "US"}], "tables": tables}
    hist = {}
    for s, d in allrows:
        hist.setdefault(d[0], []).append(d[3])
    latest = read_csv(task, "initial_workspace/latest_quiz_scores.csv")
    truth = read_csv(task, "groundtruth_workspace/expected_alerts.csv")
    cases = []
    C = cases.append
    C({"src": "preprocess/check_data.py:8", "kind": "preprocess",
       "sql": "SELECT * FROM `test-proj.academic_warning.scores_2501` LIMIT 10",
       "rows_within": "academic_warning.scores_2501", "row_count": 10})
    C({"src": "docs/task.md", "kind": "task", "sql": """
SELECT _TABLE_SUFFIX AS exam, COUNT(*) AS n, COUNT(DISTINCT student_id) AS students
FROM `academic_warning.scores_*`
GROUP BY exam ORDER BY exam""",
       "rows": [[s, sum(1 for x, _ in allrows if x == s), len({d[0] for x, d in allrows if x == s})] for s in sfx]})
    avg = {k: statistics.fmean(v) for k, v in hist.items()}
    C({"src": "docs/task.md", "kind": "task", "sql": """
SELECT student_id, AVG(score) AS hist_avg, COUNT(*) AS exams
FROM `test-proj.academic_warning.scores_*`
WHERE _TABLE_SUFFIX BETWEEN '2501' AND '2507'
GROUP BY student_id
ORDER BY student_id""", "fields": ["student_id:STRING", "hist_avg:FLOAT", "exams:INTEGER"],
       "rows": [[k, avg[k], len(hist[k])] for k in sorted(hist)]})
    union = "\n  UNION ALL ".join(f"SELECT student_id, score FROM academic_warning.scores_{s}" for s in sfx)
    C({"src": "docs/task.md", "kind": "task", "sql": f"""
WITH all_scores AS (
  {union})
SELECT COUNT(*) AS n, COUNT(DISTINCT student_id) AS students, ROUND(AVG(score), 4) AS mean
FROM all_scores""", "rows": [[len(allrows), len(hist), bq_round(statistics.fmean(d[3] for _, d in allrows), 4)]]})
    exams = {}
    for s_, d in allrows:
        exams.setdefault(d[0], {})[s_] = d[3]
    ins = ", ".join(f"'{x}' AS s{x}" for x in sfx)
    C({"src": "docs/task.md", "kind": "task", "sql": f"""
SELECT *
FROM (SELECT student_id, _TABLE_SUFFIX AS exam, score FROM `academic_warning.scores_*`)
PIVOT (MAX(score) FOR exam IN ({ins}))
ORDER BY student_id
LIMIT 5""", "fields": ["student_id:STRING"] + [f"s{x}:FLOAT" for x in sfx],
       "rows": [[k] + [exams[k].get(x) for x in sfx] for k in sorted(exams)[:5]]})
    values = ",\n  ".join(f"({sql_str(r['student_id'])}, {sql_str(r['name'])}, {r['score']})" for r in latest)
    C({"src": "docs/task.md", "kind": "task", "sql": f"""
CREATE TABLE academic_warning.latest_quiz_scores (student_id STRING, name STRING, score FLOAT64);
INSERT INTO academic_warning.latest_quiz_scores (student_id, name, score) VALUES
  {values};
SELECT COUNT(*) AS n FROM academic_warning.latest_quiz_scores""", "rows": [[len(latest)]]})
    drops = []
    for r in latest:
        h = avg[r["student_id"]]
        drops.append((r["student_id"], r["name"], float(r["score"]), h, (h - float(r["score"])) / h))
    crit = sorted((d for d in drops if d[4] > 0.45), key=lambda d: -d[4])
    assert [d[0] for d in crit] == [t["student_id"] for t in truth if float(t["drop_ratio"]) > 0.45]
    for d, t in zip(crit, truth):
        assert near(d[3], float(t["hist_avg"])) and near(d[4], float(t["drop_ratio"]))
    C({"src": "docs/task.md", "kind": "task", "sql": """
WITH hist AS (
  SELECT student_id, AVG(score) AS hist_avg
  FROM `academic_warning.scores_*`
  GROUP BY student_id)
SELECT l.student_id, l.name, l.score, h.hist_avg, (h.hist_avg - l.score) / h.hist_avg AS drop_ratio
FROM academic_warning.latest_quiz_scores AS l
JOIN hist AS h USING (student_id)
WHERE (h.hist_avg - l.score) / h.hist_avg > 0.45
ORDER BY drop_ratio DESC""", "fields": ["student_id:STRING", "name:STRING", "score:FLOAT", "hist_avg:FLOAT",
                                       "drop_ratio:FLOAT"], "rows": [list(d) for d in crit]})
    warn = sorted((d for d in drops if d[4] > 0.25), key=lambda d: d[0])
    C({"src": "docs/task.md", "kind": "task", "sql": """
SELECT l.student_id, l.name, l.score, ROUND(h.hist_avg, 2) AS hist_avg,
       IF((h.hist_avg - l.score) / h.hist_avg > 0.45, 'CRITICAL', 'WARNING') AS level
FROM academic_warning.latest_quiz_scores l
JOIN (SELECT student_id, AVG(score) AS hist_avg FROM `academic_warning.scores_*` GROUP BY 1) h
  ON h.student_id = l.student_id
WHERE l.score < h.hist_avg * 0.75
ORDER BY l.student_id""",
       "rows": [[d[0], d[1], d[2], bq_round(d[3], 2), "CRITICAL" if d[4] > 0.45 else "WARNING"] for d in warn
                if d[2] < d[3] * 0.75]})
    write(task, setup, cases, "academic-warning: the seven score tables of files/scores_25*.csv in full "
          "(as preprocess/ggcloud_upload.py loads them), check_data.py's query, and what docs/task.md asks "
          "for: historical averages over scores_2501..2507 (wildcard and UNION ALL), the latest quiz "
          "scores written into a table, the >45% (critical) and >25% drops; the critical list equals "
          "groundtruth_workspace/expected_alerts.csv.")


# ------------------------------------------------------ flagged-transactions

def flagged_transactions():
    task = "flagged-transactions"
    allrows = read_csv(task, "files/all_transactions.csv")
    clients = ["client_0001", "client_0002", "client_0003"]
    keep = [r for r in allrows if r["client_id"] in clients] + \
           [r for r in allrows if r["client_id"] == "client_0040"][:25]
    keep.sort(key=lambda r: r["transaction_id"])
    fields = [("transaction_id", "STRING"), ("client_id", "STRING"), ("txn_time", "TIMESTAMP"),
              ("amount", "FLOAT"), ("currency", "STRING"), ("merchant_category", "STRING"),
              ("channel", "STRING"), ("location_country", "STRING"), ("status", "STRING")]

    def ts(s):  # "2025-04-15 22:36:01.357628 UTC" as the corpus writes TIMESTAMPs
        return s[:-4]
    data = [[r["transaction_id"], r["client_id"], r["txn_time"], float(r["amount"]), r["currency"],
             r["merchant_category"], r["channel"], r["location_country"], r["status"]] for r in keep]
    setup = {"datasets": [{"id": "all_transactions", "location": "US"}],
             "tables": [table("all_transactions", "recordings", fields, data)]}
    cases = []
    C = cases.append
    # autodetect makes txn_time a TIMESTAMP, so BigQuery refuses PARSE_DATETIME
    # on it (the script prints "Could not retrieve data summary")
    C({"src": "preprocess/ggcloud_upload.py:181", "kind": "preprocess", "sql": """
        SELECT 
            COUNT(*) as total_rows,
            COUNT(DISTINCT client_id) as unique_clients,
            MIN(PARSE_DATETIME('%Y-%m-%d %H:%M:%S.%f UTC', txn_time)) as earliest_transaction,
            MAX(PARSE_DATETIME('%Y-%m-%d %H:%M:%S.%f UTC', txn_time)) as latest_transaction,
            AVG(amount) as avg_amount
        FROM `test-proj.all_transactions.recordings`
        """, "error": "No matching signature for function PARSE_DATETIME for argument types: STRING, TIMESTAMP"})
    amounts = [float(r["amount"]) for r in keep]
    C({"src": "preprocess/ggcloud_upload.py:181", "kind": "task", "sql": """
SELECT COUNT(*) AS total_rows, COUNT(DISTINCT client_id) AS unique_clients,
       MIN(txn_time) AS earliest_transaction, MAX(txn_time) AS latest_transaction,
       ROUND(AVG(amount), 6) AS avg_amount
FROM `test-proj.all_transactions.recordings`""",
       "fields": ["total_rows:INTEGER", "unique_clients:INTEGER", "earliest_transaction:TIMESTAMP",
                  "latest_transaction:TIMESTAMP", "avg_amount:FLOAT"],
       "rows": [[len(keep), len({r["client_id"] for r in keep}), ts(min(r["txn_time"] for r in keep)),
                 ts(max(r["txn_time"] for r in keep)), bq_round(statistics.fmean(amounts), 6)]]})
    y25 = [r for r in keep if r["txn_time"].startswith("2025") and r["client_id"] in clients]
    per = {}
    for r in y25:
        per.setdefault(r["client_id"], []).append(float(r["amount"]))
    C({"src": "docs/task.md", "kind": "task", "sql": """
SELECT client_id, COUNT(*) AS n, ROUND(AVG(amount), 4) AS mean, ROUND(STDDEV(amount), 4) AS std,
       ROUND(AVG(amount) + 3 * STDDEV(amount), 4) AS threshold
FROM `all_transactions.recordings`
WHERE client_id IN ('client_0001', 'client_0002', 'client_0003')
  AND EXTRACT(YEAR FROM txn_time) = 2025
GROUP BY client_id
ORDER BY client_id""", "fields": ["client_id:STRING", "n:INTEGER", "mean:FLOAT", "std:FLOAT", "threshold:FLOAT"],
       "rows": [[c, len(v), bq_round(statistics.fmean(v), 4), bq_round(statistics.stdev(v), 4),
                 bq_round(statistics.fmean(v) + 3 * statistics.stdev(v), 4)] for c, v in sorted(per.items())]})
    flagged = sorted((r for r in y25 if float(r["amount"]) > statistics.fmean(per[r["client_id"]]) +
                      3 * statistics.stdev(per[r["client_id"]])), key=lambda r: r["transaction_id"])
    C({"src": "docs/task.md", "kind": "task", "sql": """
WITH tx AS (
  SELECT * FROM `test-proj.all_transactions.recordings`
  WHERE client_id IN UNNEST(['client_0001', 'client_0002', 'client_0003'])
    AND txn_time >= TIMESTAMP '2025-01-01 00:00:00 UTC' AND txn_time < TIMESTAMP '2026-01-01'),
stats AS (
  SELECT client_id, AVG(amount) AS mean_amount, STDDEV_SAMP(amount) AS std_amount FROM tx GROUP BY client_id)
SELECT tx.client_id, tx.transaction_id, tx.txn_time, tx.amount
FROM tx JOIN stats USING (client_id)
WHERE tx.amount > stats.mean_amount + 3 * stats.std_amount
ORDER BY tx.transaction_id""", "fields": ["client_id:STRING", "transaction_id:STRING", "txn_time:TIMESTAMP",
                                          "amount:FLOAT"],
       "rows": [[r["client_id"], r["transaction_id"], ts(r["txn_time"]), float(r["amount"])] for r in flagged]})
    C({"src": "docs/task.md", "kind": "task", "sql": """
SELECT client_id, transaction_id, FORMAT_TIMESTAMP('%Y-%m-%d %H:%M:%E6S', txn_time) AS txn_time
FROM (
  SELECT *, AVG(amount) OVER (PARTITION BY client_id) AS m, STDDEV(amount) OVER (PARTITION BY client_id) AS s
  FROM all_transactions.recordings
  WHERE client_id IN ('client_0001', 'client_0002', 'client_0003') AND EXTRACT(YEAR FROM txn_time) = 2025)
WHERE amount > m + 3 * s
ORDER BY transaction_id""",
       "rows": [[r["client_id"], r["transaction_id"], ts(r["txn_time"])] for r in flagged]})
    def pct_cont(v, p):
        v = sorted(v)
        pos = p * (len(v) - 1)
        lo, hi = math.floor(pos), math.ceil(pos)
        return v[lo] + (v[hi] - v[lo]) * (pos - lo)
    C({"src": "docs/task.md", "kind": "task", "sql": """
SELECT DISTINCT client_id,
       PERCENTILE_CONT(amount, 0.5) OVER (PARTITION BY client_id) AS median,
       PERCENTILE_CONT(amount, 0.9) OVER (PARTITION BY client_id) AS p90
FROM `all_transactions.recordings`
WHERE client_id IN ('client_0001', 'client_0002', 'client_0003') AND EXTRACT(YEAR FROM txn_time) = 2025
ORDER BY client_id""", "fields": ["client_id:STRING", "median:FLOAT", "p90:FLOAT"],
       "rows": [[c, pct_cont(v, 0.5), pct_cont(v, 0.9)] for c, v in sorted(per.items())]})
    C({"src": "docs/task.md", "kind": "task", "sql": """
SELECT client_id, APPROX_QUANTILES(amount, 4)[OFFSET(0)] AS lowest, APPROX_QUANTILES(amount, 4)[OFFSET(4)] AS highest,
       ARRAY_LENGTH(APPROX_QUANTILES(amount, 4)) AS n
FROM all_transactions.recordings
WHERE client_id = 'client_0002' AND EXTRACT(YEAR FROM txn_time) = 2025
GROUP BY client_id""", "rows": [["client_0002", min(per["client_0002"]), max(per["client_0002"]), 5]]})
    pool = [float(r["amount"]) for r in y25]
    thr = statistics.fmean(pool) + 3 * statistics.stdev(pool)
    pooled = sorted((r for r in y25 if float(r["amount"]) > thr), key=lambda r: r["transaction_id"])
    C({"src": "groundtruth_workspace/anomaly_detection.py:44", "kind": "task", "sql": """
SELECT t.client_id, t.transaction_id, t.txn_time
FROM all_transactions.recordings AS t,
     (SELECT AVG(amount) + 3 * STDDEV(amount) AS threshold
      FROM all_transactions.recordings
      WHERE client_id IN ('client_0001', 'client_0002', 'client_0003') AND DATE(txn_time) >= '2025-01-01'
        AND DATE(txn_time) <= '2025-12-31') AS s
WHERE t.client_id IN ('client_0001', 'client_0002', 'client_0003')
  AND EXTRACT(YEAR FROM t.txn_time) = 2025 AND t.amount > s.threshold
ORDER BY t.transaction_id""",
       "rows": [[r["client_id"], r["transaction_id"], ts(r["txn_time"])] for r in pooled]})
    write(task, setup, cases, "flagged-transactions: every transaction of three of the twenty high-value "
          "clients and 25 of another client, from files/all_transactions.csv (loaded with autodetect, so "
          "txn_time is a TIMESTAMP); the preprocess summary query verbatim (BigQuery refuses it: "
          "PARSE_DATETIME takes a STRING) and as it works on a TIMESTAMP, and what docs/task.md asks for: "
          "2025 transactions, amount > mean + 3 * std per client (and pooled, as the ground-truth script does).")


# ---------------------------------------------------------- live-transactions

def autodetect(values):
    """BigQuery's CSV autodetect for one column, as far as these files need it."""
    import re
    vals = [v for v in values if v != ""]
    def kind(v):
        if re.fullmatch(r"[+-]?\d+", v):
            return "INTEGER"
        if re.fullmatch(r"[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?", v):
            return "FLOAT"
        if v in ("True", "False", "true", "false"):
            return "BOOLEAN"
        if re.fullmatch(r"\d{4}-\d\d-\d\d", v):
            return "DATE"
        if re.fullmatch(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?(Z| UTC)?", v):
            return "TIMESTAMP"
        return "STRING"
    kinds = {kind(v) for v in vals}
    if not kinds:
        return "STRING"
    if kinds == {"INTEGER", "FLOAT"}:
        return "FLOAT"
    return kinds.pop() if len(kinds) == 1 else "STRING"


def convert(v, t):
    if v == "":
        return None
    if t == "INTEGER":
        return int(v)
    if t == "FLOAT":
        return float(v)
    if t == "BOOLEAN":
        return v.lower() == "true"
    if t == "TIMESTAMP":
        return v.replace("T", " ").rstrip("Z").replace(" UTC", "")
    return v


def live_transactions():
    task = "live-transactions"
    base = "preprocess/transactions_analytics"
    tx, user = "T8492XJ3", "U8847293"
    truth = json.loads(show(task, f"groundtruth_workspace/{tx}_investigation_report.json"))
    names = ["accounts", "blacklist", "cards", "devices", "fraud_alerts", "live_transactions", "locations",
             "merchants", "risk_scores", "users"]
    tables, rows_of, types_of = [], {}, {}
    main = read_csv(task, f"{base}/live_transactions.csv")
    t0 = next(r for r in main if r["transaction_id"] == tx)
    for n in names:
        rows = read_csv(task, f"{base}/{n}.csv")
        cols = list(rows[0].keys())
        types = {c: autodetect([r[c] for r in rows]) for c in cols}
        related = [r for r in rows if tx in r.get("transaction_id", "") or r.get("user_id") == user or
                   r.get("merchant_id") == t0["merchant_id"] or r.get("location_id") == t0["location_id"]]
        keep = rows if len(rows) <= 25 else rows[:4] + [r for r in related if r not in rows[:4]]
        rows_of[n], types_of[n] = keep, types
        tables.append(table("transactions_analytics", n, [(c, types[c]) for c in cols],
                            [[convert(r[c], types[c]) for c in cols] for r in keep]))
    setup = {"datasets": [{"id": "transactions_analytics", "location": "US"}], "tables": tables}

    def conv_row(n, r):
        return [convert(r[c], types_of[n][c]) for c in r]
    cases = []
    C = cases.append
    C({"src": "docs/task.md", "kind": "task",
       "sql": "SELECT table_name FROM `test-proj.transactions_analytics.INFORMATION_SCHEMA.TABLES` ORDER BY table_name",
       "rows": [[n] for n in names]})
    C({"src": "docs/task.md", "kind": "task", "sql": """
SELECT table_name, column_name, data_type
FROM transactions_analytics.INFORMATION_SCHEMA.COLUMNS
WHERE column_name IN ('transaction_id', 'user_id')
ORDER BY table_name, column_name""",
       "rows": [[n, c, "STRING"] for n in names for c in sorted(types_of[n]) if c in ("transaction_id", "user_id")]})
    C({"src": "docs/task.md", "kind": "task",
       "sql": f"SELECT * FROM `transactions_analytics.live_transactions` WHERE transaction_id = '{tx}'",
       "rows": [conv_row("live_transactions", t0)]})
    for n, key in (("users", "user_id"), ("accounts", "account_id"), ("merchants", "merchant_id"),
                   ("cards", "card_id"), ("devices", "device_id"), ("locations", "location_id")):
        r = next(x for x in rows_of[n] if x[key] == t0[key])
        g = truth[n]
        assert str(g[key]) == r[key]
        C({"src": "docs/task.md", "kind": "task", "sql": f"""
SELECT x.* FROM `test-proj.transactions_analytics.{n}` AS x
JOIN `test-proj.transactions_analytics.live_transactions` AS t ON x.{key} = t.{key}
WHERE t.transaction_id = '{tx}'""", "rows": [conv_row(n, r)]})
    alerts = [r for r in rows_of["fraud_alerts"] if r["transaction_id"] == tx]
    assert [a["alert_id"] for a in alerts] == [a["alert_id"] for a in truth["fraud_alerts"]]
    C({"src": "docs/task.md", "kind": "task", "sql": f"""
SELECT * FROM transactions_analytics.fraud_alerts WHERE transaction_id = '{tx}' ORDER BY alert_id""",
       "rows": [conv_row("fraud_alerts", r) for r in sorted(alerts, key=lambda a: a["alert_id"])]})
    risk = next(r for r in rows_of["risk_scores"] if r["user_id"] == user)
    C({"src": "docs/task.md", "kind": "task", "sql": f"""
SELECT user_id, current_score, JSON_EXTRACT_SCALAR(score_history, '$[0].reason') AS first_reason
FROM transactions_analytics.risk_scores
WHERE user_id = (SELECT user_id FROM transactions_analytics.live_transactions WHERE transaction_id = '{tx}')""",
       "rows": [[risk["user_id"], float(risk["current_score"]), json.loads(risk["score_history"])[0]["reason"]]]})
    def to_json(n, r):
        """TO_JSON_STRING of a row, written here from BigQuery's documented
        encoding: numbers bare (FLOAT64 as CAST AS STRING writes it), BOOL
        true/false, TIMESTAMP as RFC 3339 with Z, no spaces."""
        out = []
        for c, v in r.items():
            t, v = types_of[n][c], convert(v, types_of[n][c])
            if v is None:
                s = "null"
            elif t == "FLOAT":
                s = repr(v)[:-2] if repr(v).endswith(".0") else repr(v)
            elif t == "TIMESTAMP":
                s = json.dumps(v.replace(" ", "T") + "Z")
            elif t == "BOOLEAN":
                s = "true" if v else "false"
            elif t == "INTEGER":
                s = str(v)
            else:
                s = json.dumps(v, ensure_ascii=False)
            out.append(json.dumps(c) + ":" + s)
        return "{" + ",".join(out) + "}"
    u = next(x for x in rows_of["users"] if x["user_id"] == user)
    assert json.loads(to_json("users", u))["email"] == truth["users"]["email"]
    C({"src": "docs/task.md", "kind": "task", "sql": f"""
SELECT TO_JSON_STRING(u) AS users_json
FROM `transactions_analytics.users` AS u
WHERE u.user_id IN (SELECT user_id FROM `transactions_analytics.live_transactions` WHERE transaction_id = '{tx}')""",
       "fields": ["users_json:STRING"], "rows": [[to_json("users", u)]]})
    C({"src": "docs/task.md", "kind": "task", "sql": f"""
SELECT alert_id, TO_JSON_STRING(fraud_alerts) AS alert
FROM transactions_analytics.fraud_alerts
WHERE fraud_alerts.transaction_id = '{tx}'
ORDER BY alert_id""", "rows": [[a["alert_id"], to_json("fraud_alerts", a)]
                                for a in sorted(alerts, key=lambda a: a["alert_id"])]})
    rel = sorted((r for r in rows_of["live_transactions"] if r["user_id"] == user and r["transaction_id"] != tx),
                 key=lambda r: r["transaction_id"])
    assert [r["transaction_id"] for r in rel] == [t["transaction_id"] for t in truth["related_transactions"]]
    C({"src": "docs/task.md", "kind": "task", "sql": f"""
SELECT transaction_id, amount, status, timestamp
FROM `transactions_analytics.live_transactions`
WHERE user_id = (SELECT user_id FROM `transactions_analytics.live_transactions` WHERE transaction_id = '{tx}')
  AND transaction_id != '{tx}'
ORDER BY transaction_id""", "fields": ["transaction_id:STRING", "amount:FLOAT", "status:STRING", "timestamp:TIMESTAMP"],
       "rows": [[r["transaction_id"], float(r["amount"]), r["status"], convert(r["timestamp"], "TIMESTAMP")]
                for r in rel]})
    mine = sorted(r["transaction_id"] for r in rows_of["live_transactions"] if r["user_id"] == user)
    C({"src": "docs/task.md", "kind": "task", "sql": f"""
SELECT transaction_id,
       ARRAY_AGG(transaction_id) OVER (PARTITION BY user_id ORDER BY transaction_id
                                       ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS user_transactions,
       COUNT(*) OVER (PARTITION BY user_id) AS n
FROM transactions_analytics.live_transactions
WHERE user_id = '{user}'
ORDER BY transaction_id
LIMIT 1""", "fields": ["transaction_id:STRING", "user_transactions:STRING:REPEATED", "n:INTEGER"],
       "rows": [[mine[0], mine, len(mine)]]})
    C({"src": "docs/task.md", "kind": "task", "sql": f"""
SELECT COUNT(*) AS hits FROM transactions_analytics.blacklist b
WHERE b.value IN (SELECT email FROM transactions_analytics.users WHERE user_id = '{user}')
   OR b.entity_id = '{user}'""",
       "rows": [[sum(1 for b in rows_of["blacklist"] if b["entity_id"] == user or
                     b["value"] == next(u for u in rows_of["users"] if u["user_id"] == user)["email"])]]})
    write(task, setup, cases, "live-transactions: the ten tables of preprocess/transactions_analytics/*.csv "
          "(the small ones whole; of the large ones four rows and every row about T8492XJ3, its user, "
          "merchant and location), typed as BigQuery's CSV autodetect types them; what docs/task.md asks "
          "for: the tables, the rows tied to T8492XJ3 in each, the user's other transactions. The rows "
          "match groundtruth_workspace/T8492XJ3_investigation_report.json. The preprocess loads CSVs and "
          "the evaluation reads Storage and Logging only.")


# ---------------------------------------------------------- machine-operating

def machine_operating():
    task = "machine-operating"
    rows = read_csv(task, "preprocess/live_sensor_data.csv")
    truth = read_csv(task, "groundtruth_workspace/anomaly_report.csv")
    data = [[r["timestamp"], r["machine_id"], r["sensor_type"], float(r["reading"])] for r in rows]
    setup = {"datasets": [{"id": "machine_operating", "location": "US"}],
             "tables": [table("machine_operating", "live_sensor",
                              [("timestamp", "TIMESTAMP"), ("machine_id", "STRING"), ("sensor_type", "STRING"),
                               ("reading", "FLOAT")], data)]}
    ranges = {}
    for t in truth:
        lo, hi = (float(x) for x in t["normal_range"].split(" - "))
        ranges[(t["machine_id"], t["sensor_type"])] = (lo, hi)
    lo_t, hi_t = f"{TODAY} 11:30:00", f"{TODAY} 12:30:00"
    window = [d for d in data if lo_t <= d[0] <= hi_t]
    anomalies = sorted(([d[0], d[1], d[2], d[3], "%.2f - %.2f" % ranges[(d[1], d[2])]] for d in window
                        if (d[1], d[2]) in ranges and not ranges[(d[1], d[2])][0] <= d[3] <= ranges[(d[1], d[2])][1]),
                       key=lambda a: (a[0], a[1], a[2]))
    want = sorted(([t["timestamp"], t["machine_id"], t["sensor_type"], float(t["reading"]), t["normal_range"]]
                   for t in truth), key=lambda a: (a[0], a[1], a[2]))
    assert anomalies == want, (len(anomalies), len(want))
    cases = []
    C = cases.append
    C({"src": "docs/task.md", "kind": "task", "sql": f"""
SELECT COUNT(*) AS readings, COUNT(DISTINCT machine_id) AS machines, MIN(timestamp) AS first, MAX(timestamp) AS last
FROM `test-proj.machine_operating.live_sensor`
WHERE timestamp BETWEEN TIMESTAMP '{lo_t}' AND TIMESTAMP '{hi_t}'""",
       "fields": ["readings:INTEGER", "machines:INTEGER", "first:TIMESTAMP", "last:TIMESTAMP"],
       "rows": [[len(window), len({d[1] for d in window}), min(d[0] for d in window), max(d[0] for d in window)]]})
    times = sorted({d[0][11:] for d in window})
    C({"src": "docs/task.md", "kind": "task", "sql": """
SELECT DISTINCT TIME(timestamp) AS t
FROM machine_operating.live_sensor
WHERE TIME(timestamp) BETWEEN '11:30:00' AND TIME '12:30:00'
ORDER BY t
LIMIT 3""", "fields": ["t:TIME"], "rows": [[t] for t in times[:3]]})
    values = ",\n  ".join(f"('{m}', '{s}', {lo}, {hi})" for (m, s), (lo, hi) in sorted(ranges.items()))
    C({"src": "docs/task.md", "kind": "task", "sql": f"""
CREATE TABLE machine_operating.parameters (machine_id STRING, sensor_type STRING, min_value FLOAT64, max_value FLOAT64);
INSERT INTO machine_operating.parameters VALUES
  {values};
SELECT COUNT(*) AS n FROM machine_operating.parameters""", "rows": [[len(ranges)]]})
    C({"src": "docs/task.md", "kind": "task", "sql": f"""
SELECT FORMAT_TIMESTAMP('%Y-%m-%d %H:%M:%E6S', s.timestamp) AS timestamp, s.machine_id, s.sensor_type, s.reading,
       FORMAT('%.2f - %.2f', p.min_value, p.max_value) AS normal_range
FROM `machine_operating.live_sensor` AS s
JOIN `machine_operating.parameters` AS p USING (machine_id, sensor_type)
WHERE s.timestamp >= TIMESTAMP('{lo_t}') AND s.timestamp <= TIMESTAMP('{hi_t}')
  AND (s.reading < p.min_value OR s.reading > p.max_value)
ORDER BY s.timestamp, s.machine_id, s.sensor_type""",
       "fields": ["timestamp:STRING", "machine_id:STRING", "sensor_type:STRING", "reading:FLOAT", "normal_range:STRING"],
       "rows": anomalies})
    per = {}
    for a in anomalies:
        per[(a[1], a[2])] = per.get((a[1], a[2]), 0) + 1
    C({"src": "docs/task.md", "kind": "task", "sql": f"""
SELECT s.machine_id, s.sensor_type, COUNTIF(s.reading NOT BETWEEN p.min_value AND p.max_value) AS anomalies
FROM machine_operating.live_sensor s
JOIN machine_operating.parameters p ON s.machine_id = p.machine_id AND s.sensor_type = p.sensor_type
WHERE DATETIME(s.timestamp) BETWEEN DATETIME '{lo_t}' AND DATETIME '{hi_t}'
GROUP BY s.machine_id, s.sensor_type
HAVING anomalies > 0
ORDER BY anomalies DESC, machine_id, sensor_type
LIMIT 5""", "rows": [[m, s, n] for (m, s), n in sorted(per.items(), key=lambda kv: (-kv[1], kv[0]))[:5]]})
    write(task, setup, cases, "machine-operating: preprocess/live_sensor_data.csv in full (the file "
          "preprocess/main.py loads into machine_operating.live_sensor), the parameter ranges the grader's "
          "anomaly_report.csv shows (the Excel file's), and what docs/task.md asks for: readings between "
          "11:30 and 12:30 on 2025-08-19 outside their ranges; the result equals "
          "groundtruth_workspace/anomaly_report.csv. The scripts themselves run no SQL.")


# ---------------------------------------------------------- price-comparison

def price_comparison():
    task = "price-comparison"
    truth = read_csv(task, "groundtruth_workspace/competitive_pricing_analysis_ground_truth.csv")
    setup = {"datasets": [{"id": "bigquery_pricing_analysis", "location": "US"}], "tables": []}
    cases = []
    C = cases.append
    C({"src": "evaluation/main.py:120", "kind": "evaluation",
       "sql": "SELECT COUNT(*) as total_count FROM `bigquery_pricing_analysis.analysis`",
       "error": "Not found: Table test-proj:bigquery_pricing_analysis.analysis"})
    values = ",\n  ".join(f"({sql_str(r['Product Name'])}, {r['Our Price']}, {r['Competitor Price']})" for r in truth)
    C({"src": "initial_workspace/requirement.md", "kind": "task", "sql": f"""
CREATE TABLE `test-proj.bigquery_pricing_analysis.analysis` (
  `Product Name` STRING, `Our Price` FLOAT64, `Competitor Price` FLOAT64, `Price Difference` FLOAT64);
INSERT INTO `test-proj.bigquery_pricing_analysis.analysis`
  (`Product Name`, `Our Price`, `Competitor Price`, `Price Difference`)
SELECT name, ours, theirs, ROUND(ours - theirs, 2)
FROM UNNEST(ARRAY<STRUCT<name STRING, ours FLOAT64, theirs FLOAT64>>[
  {values}])""", "rows": []})
    C({"src": "evaluation/main.py:120", "kind": "evaluation",
       "sql": "SELECT COUNT(*) as total_count FROM `bigquery_pricing_analysis.analysis`",
       "fields": ["total_count:INTEGER"], "rows": [[len(truth)]]})
    want = sorted(([r["Product Name"], float(r["Our Price"]), float(r["Competitor Price"]),
                    float(r["Price Difference"])] for r in truth), key=lambda r: r[0])
    for w in want:
        assert near(bq_round(w[1] - w[2], 2), w[3])
    C({"src": "evaluation/main.py:132", "kind": "evaluation", "sql": """
        SELECT 
            `Product Name`,
            `Our Price`,
            `Competitor Price`, 
            `Price Difference`
        FROM `bigquery_pricing_analysis.analysis`
        ORDER BY `Product Name`
        """, "fields": ["Product Name:STRING", "Our Price:FLOAT", "Competitor Price:FLOAT", "Price Difference:FLOAT"],
       "rows": want})
    C({"src": "initial_workspace/requirement.md", "kind": "task", "sql": """
UPDATE bigquery_pricing_analysis.analysis SET `Price Difference` = `Our Price` - `Competitor Price` WHERE TRUE;
SELECT `Product Name`, `Price Difference` FROM bigquery_pricing_analysis.analysis
WHERE `Price Difference` < 0 ORDER BY `Price Difference`, `Product Name`""",
       "rows": [[w[0], w[1] - w[2]] for w in sorted(want, key=lambda w: (w[1] - w[2], w[0])) if w[1] - w[2] < 0]})
    C({"src": "initial_workspace/requirement.md", "kind": "task", "sql": """
SELECT COUNTIF(`Price Difference` > 0) AS pricier, COUNTIF(`Price Difference` < 0) AS cheaper,
       ROUND(AVG(`Price Difference`), 3) AS mean_diff
FROM `bigquery_pricing_analysis`.`analysis`""",
       "rows": [[sum(1 for w in want if w[1] - w[2] > 0), sum(1 for w in want if w[1] - w[2] < 0),
                 bq_round(statistics.fmean(w[1] - w[2] for w in want), 3)]]})
    write(task, setup, cases, "price-comparison: the evaluation's two queries verbatim, before and after "
          "the table requirement.md describes is made the way an agent writes it (columns with spaces, "
          "INSERT ... SELECT FROM UNNEST of typed STRUCTs); the rows equal "
          "groundtruth_workspace/competitive_pricing_analysis_ground_truth.csv. The preprocess only "
          "deletes and creates the dataset.")


# --------------------------------------------------- woocommerce-new-welcome

def woocommerce_new_welcome():
    task = "woocommerce-new-welcome"
    cust = json.loads(show(task, "preprocess/customers_data.json"))
    fields = [("id", "INTEGER", "REQUIRED"), ("woocommerce_id", "INTEGER", "REQUIRED"),
              ("email", "STRING", "REQUIRED"), ("first_name", "STRING", "NULLABLE"),
              ("last_name", "STRING", "NULLABLE"), ("phone", "STRING", "NULLABLE"),
              ("date_created", "TIMESTAMP", "NULLABLE"), ("first_order_date", "TIMESTAMP", "NULLABLE"),
              ("welcome_email_sent", "BOOLEAN", "NULLABLE"), ("welcome_email_date", "TIMESTAMP", "NULLABLE"),
              ("sync_date", "TIMESTAMP", "NULLABLE"), ("metadata", "STRING", "NULLABLE")]

    def val(v, t):
        return v.replace("T", " ") if (t == "TIMESTAMP" and v) else v
    data = [[val(c[n], t) for n, t, _ in fields] for c in cust]
    setup = {"datasets": [{"id": "woocommerce_crm", "description": "WooCommerce CRM dataset", "location": "US"}],
             "tables": [{"dataset_id": "woocommerce_crm", "id": "customers",
                         "fields": [{"name": n, "type": t, "mode": m} for n, t, m in fields], "data": data}]}
    cases = []
    C = cases.append
    C({"src": "preprocess/main.py:305", "kind": "preprocess",
       "sql": "SELECT COUNT(*) as row_count FROM `test-proj.woocommerce_crm.customers` LIMIT 1",
       "fields": ["row_count:INTEGER"], "rows": [[len(cust)]]})
    C({"src": "preprocess/main.py:560", "kind": "preprocess", "sql": """
                SELECT COUNT(*) as total_rows, 
                       COUNT(DISTINCT woocommerce_id) as unique_customers,
                       COUNT(CASE WHEN welcome_email_sent = true THEN 1 END) as emails_sent
                FROM `test-proj.woocommerce_crm.customers`
                """, "fields": ["total_rows:INTEGER", "unique_customers:INTEGER", "emails_sent:INTEGER"],
       "rows": [[len(cust), len({c["woocommerce_id"] for c in cust}), sum(1 for c in cust if c["welcome_email_sent"])]]})
    C({"src": "evaluation/main.py:54", "kind": "evaluation", "sql": "SELECT * FROM `test-proj.woocommerce_crm.customers`",
       "fields": [f"{n}:{t}" for n, t, _ in fields], "unordered": True, "rows": data})
    pick = cust[2]
    C({"src": "evaluation/main.py:61", "kind": "evaluation",
       "sql": "SELECT * FROM `test-proj.woocommerce_crm.customers` WHERE email = @email",
       "params": [{"name": "email", "parameterType": {"type": "STRING"}, "parameterValue": {"value": pick["email"]}}],
       "rows": [data[2]]})
    C({"src": "evaluation/main.py:61", "kind": "evaluation",
       "sql": "SELECT * FROM `test-proj.woocommerce_crm.customers` WHERE email = @email",
       "params": [{"name": "email", "parameterType": {"type": "STRING"}, "parameterValue": {"value": "nobody@example.com"}}],
       "rows": []})
    # the agent syncs new customers and marks their welcome email
    new = [(51, 60, "new.customer1@woocommerce.com", "Nina", "O'Brien", "555-0151", "2025-09-18 09:00:00",
            "2025-09-18 10:15:00"),
           (52, 61, "new.customer2@woocommerce.com", "Omar", "Diaz", None, "2025-09-19 12:30:00",
            "2025-09-19 13:00:00")]
    values = ",\n  ".join(
        f"({i}, {w}, {sql_str(e)}, {sql_str(f)}, {sql_str(l)}, {sql_str(p) if p else 'NULL'}, "
        f"TIMESTAMP '{dc}', TIMESTAMP '{fo}', FALSE, NULL, CURRENT_TIMESTAMP(), '{{}}')"
        for i, w, e, f, l, p, dc, fo in new)
    C({"src": "docs/task.md", "kind": "task", "sql": f"""
INSERT INTO `woocommerce_crm.customers`
  (id, woocommerce_id, email, first_name, last_name, phone, date_created, first_order_date,
   welcome_email_sent, welcome_email_date, sync_date, metadata)
VALUES
  {values};
SELECT id, email, last_name, phone, first_order_date, sync_date IS NOT NULL AS synced
FROM woocommerce_crm.customers WHERE id > 50 ORDER BY id""",
       "rows": [[n[0], n[2], n[4], n[5], n[7], True] for n in new]})
    C({"src": "docs/task.md", "kind": "task", "sql": """
UPDATE woocommerce_crm.customers
SET welcome_email_sent = TRUE, welcome_email_date = CURRENT_TIMESTAMP()
WHERE email IN ('new.customer1@woocommerce.com', 'new.customer2@woocommerce.com') AND NOT welcome_email_sent;
SELECT COUNTIF(welcome_email_sent) AS sent, COUNTIF(welcome_email_date IS NULL) AS no_date, COUNT(*) AS n
FROM woocommerce_crm.customers""",
       "rows": [[sum(1 for c in cust if c["welcome_email_sent"]) + 2,
                 sum(1 for c in cust if c["welcome_email_date"] is None), len(cust) + 2]]})
    C({"src": "docs/task.md", "kind": "task", "sql": """
MERGE `woocommerce_crm.customers` AS c
USING (SELECT 'new.customer2@woocommerce.com' AS email, '555-0152' AS phone
       UNION ALL SELECT 'new.customer3@woocommerce.com', '555-0153') AS s
ON c.email = s.email
WHEN MATCHED THEN UPDATE SET phone = s.phone
WHEN NOT MATCHED THEN INSERT (id, woocommerce_id, email, phone, welcome_email_sent)
  VALUES (53, 62, s.email, s.phone, FALSE);
SELECT id, email, phone, welcome_email_sent FROM woocommerce_crm.customers WHERE id > 51 ORDER BY id""",
       "rows": [[52, "new.customer2@woocommerce.com", "555-0152", True],
                [53, "new.customer3@woocommerce.com", "555-0153", False]]})
    C({"src": "preprocess/main.py:371", "kind": "preprocess",
       "sql": "DELETE FROM `test-proj.woocommerce_crm.customers` WHERE true", "rows": []})
    C({"src": "preprocess/main.py:305", "kind": "preprocess",
       "sql": "SELECT COUNT(*) as row_count FROM `test-proj.woocommerce_crm.customers` LIMIT 1", "rows": [[0]]})
    write(task, setup, cases, "woocommerce-new-welcome: woocommerce_crm.customers with the schema "
          "preprocess/main.py creates and the 50 rows of preprocess/customers_data.json it loads; the "
          "preprocess and evaluation queries verbatim (the evaluation's @email parameter as "
          "ScalarQueryParameter sends it), and the syncing an agent does for docs/task.md (INSERT with "
          "CURRENT_TIMESTAMP(), UPDATE of the welcome flags, an upsert by MERGE).")


def main():
    global GIT, COMMIT
    GIT = sys.argv[1]
    COMMIT = sys.argv[2] if len(sys.argv) > 2 else SOURCE["commit"]
    for f in (game_statistics, ab_testing, academic_warning, flagged_transactions, live_transactions,
              machine_operating, price_comparison, woocommerce_new_welcome):
        f()


if __name__ == "__main__":
    main()
