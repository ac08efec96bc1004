"""P15 Canvas (src/canvas): the state a Toolathlon Canvas gets at acquire with 503 users
(a synthetic users file of 500 users, plus the 3 admins), as the daemon logs it
("canvas: ID ready in N ms"): database created, users and tokens seeded, baseline copies
written, socket listening; target p50 <= 30 ms. Then, on one sandbox with a course of 30
students, a quiz of 10 questions and 20 assignments: REST GET of the course with include[]
(teachers, total_students, term, sections) through the graders' port (one keep-alive
connection), and the MCP tools canvas_list_courses and canvas_get_quiz through the gateway
(one session). Every answer is checked (ids, counts)."""
import json
import os
import re
import time

import benchlib as B


def users_file(path, n=500):
    users = [{"id": i, "full_name": "User %05d Test" % i, "email": "user%05d@mcp.com" % i,
              "canvas_token": "canvas_token_bench_%05d" % i} for i in range(1, n + 1)]
    with open(path, "w") as f:
        json.dump({"users": users}, f)


def run(ctx):
    n_acq = 5 if ctx.smoke else 20 if ctx.quick else 60
    n_get = 50 if ctx.smoke else 300 if ctx.quick else 1000
    uf = os.path.join(ctx.workdir, "canvas-users.json")
    users_file(uf)
    port = B.free_port()
    os.environ["MCPBOX_LOG"] = "info"
    d = B.Daemon(ctx.workdir, ["--canvas-listen", "127.0.0.1:%d" % port, "--canvas-users", uf],
                 name="canvas").start()
    os.environ.pop("MCPBOX_LOG", None)
    api = B.Api(d.url)
    errors = 0
    rows = []
    try:
        for _ in range(n_acq):
            sid = api.call("POST", "/sandbox/canvas", {"benchmark": "Toolathlon"},
                           expect=(201,))["sandbox_id"]
            api.call("DELETE", "/sandbox/canvas/" + sid)
        times = [float(x) for x in re.findall(r"canvas: \S+ ready in ([0-9.]+) ms \(503 users\)",
                                              d.log())]
        if len(times) != n_acq:
            errors += abs(n_acq - len(times))
        s = B.summary(times)
        r = B.Row("P15.state", "Canvas state at acquire, 503 users and tokens (copy of the set's template database, "
                  "baselines, socket; the first acquire seeds the template), %d acquires; target p50 "
                  "<= 30 ms" % n_acq,
                  B.fmt_lat(s, thr=False), errors=errors, cmd="bench/run --only P15")
        r.data = {"state_ms": s}
        rows.append(r)

        acq = api.call("POST", "/sandbox/canvas", {"benchmark": "Toolathlon",
                                                   "test_account_email": "user00001@mcp.com"},
                       expect=(201,))
        admin = B.Http("http://127.0.0.1:%d" % port)
        auth = {"Authorization": "Bearer mcpcanvasadmintoken1"}

        def call(method, path, body=None):
            st, hd, data = admin.request(method, "/api/v1" + path, body, auth)
            if st != 200:
                raise B.BenchError("%s %s: %d %s" % (method, path, st, data[:200]))
            return json.loads(data)
        cid = call("POST", "/accounts/1/courses", {"course": {"name": "Bench", "course_code": "B1"}})["id"]
        call("PUT", "/courses/%d" % cid, {"course": {"event": "offer"}})
        for u in range(1, 31):
            call("POST", "/courses/%d/enrollments" % cid, {"enrollment": {
                "user_id": u, "type": "StudentEnrollment", "enrollment_state": "active"}})
        call("POST", "/courses/%d/enrollments" % cid, {"enrollment": {
            "user_id": 31, "type": "TeacherEnrollment", "enrollment_state": "active"}})
        for a in range(20):
            call("POST", "/courses/%d/assignments" % cid, {"assignment": {
                "name": "A%d" % a, "points_possible": 10, "published": True}})
        qid = call("POST", "/courses/%d/quizzes" % cid, {"quiz": {"title": "Q", "published": True}})["id"]
        for q in range(10):
            call("POST", "/courses/%d/quizzes/%d/questions" % (cid, qid), {"question": {
                "question_text": "q%d" % q, "question_type": "multiple_choice_question",
                "points_possible": 1, "answers": [{"answer_text": "a", "answer_weight": 100},
                                                  {"answer_text": "b", "answer_weight": 0}]}})
        path = ("/courses/%d?include[]=teachers&include[]=total_students&include[]=term"
                "&include[]=sections" % cid)
        lat, errs = [], 0
        for i in range(n_get + 20):
            t = time.perf_counter()
            c = call("GET", path)
            if i >= 20:
                lat.append((time.perf_counter() - t) * 1000)
            if c.get("total_students") != 30 or len(c.get("teachers", [])) != 1:
                errs += 1
        s = B.summary(lat)
        r = B.Row("P15.rest", "REST GET /api/v1/courses/:id with include[] teachers, "
                  "total_students, term, sections (30 students), %d requests, 1 keep-alive "
                  "connection, through the graders' port" % n_get, B.fmt_lat(s), errors=errs,
                  cmd="bench/run --only P15")
        r.data = {"rest_ms": s}
        rows.append(r)

        url = acq["server_urls"]["canvas"]
        m = B.McpSession(url).open()
        for tool, args, check in (
                ("canvas_list_courses", {}, lambda x: len(x) == 1 and x[0]["id"] == cid),
                ("canvas_get_quiz", {"course_id": cid, "quiz_id": qid},
                 lambda x: x["question_count"] == 10 and x["points_possible"] == 10)):
            lat, errs = [], 0
            for i in range(n_get // 2 + 10):
                t = time.perf_counter()
                out = json.loads(m.call(tool, args))
                if i >= 10:
                    lat.append((time.perf_counter() - t) * 1000)
                if not check(out):
                    errs += 1
            s = B.summary(lat)
            r = B.Row("P15." + tool[7:], "MCP %s through the gateway (the sandbox's canvas "
                      "server over its socket), %d calls, 1 session" % (tool, n_get // 2),
                      B.fmt_lat(s), errors=errs, cmd="bench/run --only P15")
            r.data = {"ms": s}
            rows.append(r)
        m.close()
        api.call("DELETE", "/sandbox/canvas/" + acq["sandbox_id"])

        # density: the daemon's memory with many live Canvas sandboxes (generated
        # admins: sandboxes without a benchmark)
        n_live = 5 if ctx.smoke else 100
        before = B.proc_status(d.pid).get("VmRSS", 0)
        sids = [api.call("POST", "/sandbox/canvas", {}, expect=(201,))["sandbox_id"]
                for _ in range(n_live)]
        st = B.proc_status(d.pid)
        after, peak = st.get("VmRSS", 0), st.get("VmHWM", 0)
        for sid in sids:
            api.call("DELETE", "/sandbox/canvas/" + sid)
        r = B.Row("P15.live", "daemon memory with %d live Canvas sandboxes (each: its database "
                  "open, socket listening, canvas server running in the sandbox)" % n_live,
                  "RSS %s (+%s, %s per sandbox); peak %s" % (
                      B.fmt_mb(after), B.fmt_mb(after - before),
                      B.fmt_mb((after - before) / max(1, n_live)), B.fmt_mb(peak)),
                  cmd="bench/run --only P15")
        r.data = {"live": n_live, "rss_before": before, "rss_after": after, "hwm": peak}
        rows.append(r)
    finally:
        api.close()
        d.stop()
    return rows
