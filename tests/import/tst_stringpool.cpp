// SPDX-License-Identifier: MIT
// StringPool: dense ids, stable views across growth, large strings, against a std::map reference (short
// strings, and long ones sharing a prefix as templated kernel names do: every hash lane and tail length).
#include "model/import/stringpool.h"

#include <QTest>

#include <map>
#include <random>

using namespace gapscope::model::importer;

class TstStringPool : public QObject {
    Q_OBJECT
private slots:
    void idsAreDenseAndStable();
    void randomAgainstMap_data();
    void randomAgainstMap();
    void longNamesDifferingLate();
};

void TstStringPool::idsAreDenseAndStable()
{
    StringPool pool;
    QCOMPARE(pool.intern(""), 0u);
    QCOMPARE(pool.intern("a"), 1u);
    QCOMPARE(pool.intern("b"), 2u);
    QCOMPARE(pool.intern("a"), 1u);
    const std::string big(1 << 20, 'x'); // larger than an arena chunk
    const uint32_t bigId = pool.intern(big);
    QCOMPARE(bigId, 3u);
    const std::string_view a = pool.str(1);
    for (int i = 0; i < 100000; ++i) // grows the table and the arena many times
        pool.intern("name " + std::to_string(i));
    QCOMPARE(a, std::string_view("a"));
    QCOMPARE(pool.str(bigId), std::string_view(big));
    QCOMPARE(pool.intern(big), bigId);
    QCOMPARE(pool.size(), size_t(100004));
}

void TstStringPool::randomAgainstMap_data()
{
    QTest::addColumn<int>("prefix");
    QTest::addColumn<int>("maxRandom");
    QTest::newRow("short") << 0 << 40;
    QTest::newRow("long, shared prefix") << 200 << 90;
}

void TstStringPool::randomAgainstMap()
{
    QFETCH(int, prefix);
    QFETCH(int, maxRandom);
    StringPool pool;
    std::map<std::string, uint32_t> ref;
    std::mt19937 rng(7);
    for (int i = 0; i < 50000; ++i) {
        std::string s(size_t(prefix), 'p');
        s.resize(s.size() + rng() % unsigned(maxRandom), 'a');
        for (size_t k = size_t(prefix); k < s.size(); ++k)
            s[k] = char('a' + rng() % 3);
        const uint32_t id = i % 2 ? pool.intern(s) : pool.intern(s, StringPool::hash(s));
        auto [it, inserted] = ref.emplace(s, id);
        QCOMPARE(it->second, id);
        QCOMPARE(pool.str(id), std::string_view(s));
    }
    QCOMPARE(pool.size(), ref.size() + (ref.count("") ? 0 : 1));
}

// Names that differ in one byte, at every position of a 1 KiB name: distinct hashes, distinct ids.
void TstStringPool::longNamesDifferingLate()
{
    StringPool pool;
    const std::string base(1024, 'x');
    std::map<uint64_t, size_t> hashes;
    for (size_t pos = 0; pos < base.size(); ++pos) {
        std::string s = base;
        s[pos] = 'y';
        hashes.emplace(StringPool::hash(s), pos);
        QCOMPARE(pool.intern(s), uint32_t(pos + 1));
    }
    QCOMPARE(hashes.size(), base.size());
    QCOMPARE(pool.intern(base), uint32_t(base.size() + 1));
}

QTEST_GUILESS_MAIN(TstStringPool)
#include "tst_stringpool.moc"
