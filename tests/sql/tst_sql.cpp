// SPDX-License-Identifier: MIT
// The SQL tables (model/sql): rows of a hand-built trace with known values (step of each kernel, own time
// under programmatic dependent launch, grouped order), GROUP BY / ORDER BY name handed over by the kernels
// table without a sort and with SQLite's own answer, errors that name the statement, and database files
// (append, capture ids, refusals).
#include "model/sql/sqlsession.h"
#include "model/synth/synth.h"

#include <QtTest>

#include <sqlite3.h>

#include <cstdio>
#include <map>
#include <string>
#include <unistd.h>

using namespace gapscope;
using namespace gapscope::model;
using namespace gapscope::model::sql;

namespace {

// Rank 0: stream 1 with kernels b, a (the second launched before the first ended: PDL), c; stream 2 with a.
// Steps [0, 100) and [100, 250). A kernel at 300 is in no step.
Trace handTrace()
{
    TraceBuilder b;
    const LaneId s1 = b.lane({ LaneKind::GpuStream, 0, "h", 0, 1, "", 0 });
    const LaneId s2 = b.lane({ LaneKind::GpuStream, 0, "h", 0, 2, "", 0 });
    b.addKernel(s1, 10, 40, b.intern("b_kernel"), 1, {}); // [10, 50)
    b.addKernel(s1, 30, 40, b.intern("a_kernel"), 2, {}); // [30, 70): own from 50 = 20
    b.addKernel(s1, 120, 10, b.intern("c_kernel"), 3, {});
    b.addKernel(s2, 60, 5, b.intern("a_kernel"), 4, {});
    b.addKernel(s2, 300, 5, b.intern("b_kernel"), 5, {});
    Step s0(0, 0, 100, StepSource::File);
    s0.kind = StepKind::Decode;
    Step s1s(1, 100, 250, StepSource::File);
    s1s.kind = StepKind::Prefill;
    b.addStep(0, s0);
    b.addStep(0, s1s);
    return b.finish();
}

struct Result {
    std::vector<std::string> columns;
    std::vector<std::vector<std::string>> rows;
};

Result query(SqlSession& s, const std::string& sql, Status* status = nullptr)
{
    Result r;
    ResultSink sink;
    sink.begin = [&](const std::vector<std::string>& c) { r.columns = c; };
    sink.row = [&](const std::vector<ResultValue>& row) {
        std::vector<std::string> v;
        v.reserve(row.size());
        for (const auto& x : row)
            v.push_back(x.type == ResultValue::Type::Null ? "NULL" : x.text);
        r.rows.push_back(v);
        return true;
    };
    Status st = s.run(sql, sink);
    if (status)
        *status = st;
    else if (!st)
        qFatal("%s", st.message().c_str());
    return r;
}

std::string plan(SqlSession& s, const std::string& sql)
{
    std::string out;
    for (const auto& row : query(s, "EXPLAIN QUERY PLAN " + sql).rows)
        out += row.back() + "\n";
    return out;
}

std::string tempPath(const char* name)
{
    return QDir::temp().filePath(QString("gapscope_tst_sql_%1_%2").arg(getpid()).arg(name)).toStdString();
}

} // namespace

class TestSql : public QObject {
    Q_OBJECT
private slots:
    void kernelRows()
    {
        const Trace t = handTrace();
        TraceTables tables(t, {}, {});
        auto s = SqlSession::open(tables);
        QVERIFY(s);
        const Result r = query(**s,
            "select name, stream, step, step_kind, start, dur, own, correlation from kernels order by correlation");
        const std::vector<std::vector<std::string>> want = {
            { "b_kernel", "1", "0", "decode", "10", "40", "40", "1" },
            { "a_kernel", "1", "0", "decode", "30", "40", "20", "2" },
            { "c_kernel", "1", "1", "prefill", "120", "10", "10", "3" },
            { "a_kernel", "2", "0", "decode", "60", "5", "5", "4" },
            { "b_kernel", "2", "NULL", "NULL", "300", "5", "5", "5" },
        };
        QCOMPARE(r.rows, want);
        // Steps as summary's table: kernels starting in each window.
        const Result st = query(**s, "select step, kind, start, window, kernels from steps order by step");
        QCOMPARE(st.rows,
            (std::vector<std::vector<std::string>> {
                { "0", "decode", "0", "100", "3" }, { "1", "prefill", "100", "150", "1" } }));
    }

    // GROUP BY name and ORDER BY name are handed over grouped (no temp B-tree), with the same answers as
    // SQLite's own sort; own time in that order is the stream order's.
    void groupedByName()
    {
        const Trace t = handTrace();
        TraceTables tables(t, {}, {});
        auto s = SqlSession::open(tables);
        QVERIFY(s);
        const std::string group = "select name, count(*), sum(own) from kernels group by name";
        QVERIFY2(plan(**s, group).find("TEMP B-TREE") == std::string::npos, plan(**s, group).c_str());
        QCOMPARE(query(**s, group).rows,
            (std::vector<std::vector<std::string>> {
                { "a_kernel", "2", "25" }, { "b_kernel", "2", "45" }, { "c_kernel", "1", "10" } }));
        const std::string asc = "select name, correlation from kernels order by name";
        QVERIFY(plan(**s, asc).find("TEMP B-TREE") == std::string::npos);
        std::vector<std::string> names;
        for (const auto& r : query(**s, asc).rows)
            names.push_back(r[0]);
        QCOMPARE(names, (std::vector<std::string> { "a_kernel", "a_kernel", "b_kernel", "b_kernel", "c_kernel" }));
        // Descending and two-column orders are SQLite's to sort.
        const std::string desc = "select name from kernels order by name desc, correlation";
        QVERIFY(plan(**s, desc).find("TEMP B-TREE") != std::string::npos);
        names.clear();
        for (const auto& r : query(**s, desc).rows)
            names.push_back(r[0]);
        QCOMPARE(names, (std::vector<std::string> { "c_kernel", "b_kernel", "b_kernel", "a_kernel", "a_kernel" }));
        // A sub-select and a join over the same table at once (two cursors).
        QCOMPARE(query(**s, "select count(*) from kernels a join kernels b on a.name = b.name").rows[0][0],
            std::string("9"));
    }

    void errorsNameTheStatement()
    {
        const Trace t = handTrace();
        TraceTables tables(t, {}, {});
        auto s = SqlSession::open(tables);
        QVERIFY(s);
        Status st;
        query(**s, "select 1; selct name from kernels", &st);
        QVERIFY(!st);
        QVERIFY2(st.message().find("statement 2: selct name") != std::string::npos, st.message().c_str());
        query(**s, "select nope from kernels", &st);
        QVERIFY(st.message().find("no such column: nope") != std::string::npos);
        query(**s, "  ", &st);
        QVERIFY(st.message().find("no SQL statement") != std::string::npos);
        query(**s, "insert into kernels(name) values('x')", &st); // the tables are read only
        QVERIFY(!st);
    }

    // Tables over a synthetic trace with its analysis: bars add up to each step's window.
    void barsAddUpToTheStep()
    {
        SynthOptions o;
        o.ranks = 2;
        o.steps = 6;
        o.kernelsPerStep = 40;
        auto t = synthesize(o);
        QVERIFY(t);
        const KernelClassifier& classifier = KernelClassifier::builtinDefault();
        GapAnalyzer analyzer(*t, classifier, StepBudget {});
        TraceTables::Analysis a;
        a.classifier = &classifier;
        a.analyzer = [&] { return &analyzer; };
        TraceTables tables(*t, a, {});
        auto s = SqlSession::open(tables);
        QVERIFY(s);
        const Result r = query(**s,
            "select b.rank, b.step, sum(b.ns), s.window from bars b join steps s using (rank, step) "
            "where b.kind <> 'budget' group by 1, 2");
        QCOMPARE(r.rows.size(), size_t(12));
        for (const auto& row : r.rows)
            QCOMPARE(row[2], row[3]);
        QCOMPARE(query(**s, "select count(*) from kernels where class is null").rows[0][0], std::string("0"));
    }

    void databaseAppends()
    {
        const std::string path = tempPath("append.db");
        std::remove(path.c_str());
        const Trace t = handTrace();
        for (int i = 0; i < 3; ++i) {
            auto db = SqlDatabase::open(path, i > 0);
            QVERIFY2(db, db ? "" : db.error().c_str());
            CaptureInfo c;
            c.id = (*db)->nextCaptureId();
            QCOMPARE(c.id, int64_t(i + 1));
            c.labels["run"] = std::to_string(i);
            QVERIFY((*db)->write(TraceTables(t, {}, c)));
            QVERIFY((*db)->finish());
        }
        auto s = SqlSession::openDatabase(path);
        QVERIFY(s);
        QVERIFY(SqlSession::isDatabase(path));
        const Result r = query(**s,
            "select capture, l.value, count(*), sum(own) from kernels join labels l using (capture) group by capture");
        QCOMPARE(r.rows,
            (std::vector<std::vector<std::string>> {
                { "1", "0", "5", "80" }, { "2", "1", "5", "80" }, { "3", "2", "5", "80" } }));
        // The names are stored once.
        QCOMPARE(query(**s, "select count(*) from strings").rows[0][0], std::string("3"));
        // A database that exists is not written over; another SQLite file is not appended to.
        QVERIFY(!SqlDatabase::open(path, false));
        const std::string other = tempPath("other.db");
        std::remove(other.c_str());
        sqlite3* raw = nullptr;
        QCOMPARE(sqlite3_open(other.c_str(), &raw), SQLITE_OK);
        sqlite3_exec(raw, "create table t(x)", nullptr, nullptr, nullptr);
        sqlite3_close(raw);
        auto refused = SqlDatabase::open(other, true);
        QVERIFY(!refused);
        QVERIFY2(refused.error().find("not a gapscope database") != std::string::npos, refused.error().c_str());
        QVERIFY(!SqlSession::isDatabase(other));
        std::remove(path.c_str());
        std::remove(other.c_str());
    }
};

QTEST_GUILESS_MAIN(TestSql)
#include "tst_sql.moc"
