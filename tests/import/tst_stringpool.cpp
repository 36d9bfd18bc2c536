// SPDX-License-Identifier: MIT
// StringPool: dense ids, stable views across growth, large strings, against a std::map reference.
#include "model/import/stringpool.h"

#include <QTest>

#include <map>
#include <random>

using namespace gapscope::model::importer;

class TstStringPool : public QObject {
    Q_OBJECT
private slots:
    void idsAreDenseAndStable();
    void randomAgainstMap();
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

void TstStringPool::randomAgainstMap()
{
    StringPool pool;
    std::map<std::string, uint32_t> ref;
    std::mt19937 rng(7);
    for (int i = 0; i < 50000; ++i) {
        std::string s(rng() % 40, 'a');
        for (char& c : s)
            c = char('a' + rng() % 3);
        const uint32_t id = pool.intern(s);
        auto [it, inserted] = ref.emplace(s, id);
        QCOMPARE(it->second, id);
        QCOMPARE(pool.str(id), std::string_view(s));
    }
    QCOMPARE(pool.size(), ref.size() + (ref.count("") ? 0 : 1));
}

QTEST_GUILESS_MAIN(TstStringPool)
#include "tst_stringpool.moc"
