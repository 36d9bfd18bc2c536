// SPDX-License-Identifier: MIT
// WaterfallData: columns from a known analysis (budget bars, budget total, gap bars, measured total).
#include "views/analysis/waterfalldata.h"

#include <QTest>

class TstWaterfallData : public QObject {
    Q_OBJECT
private slots:
    void columnsFromKnownAnalysis();
    void negativeGapFloatsDown();
    void empty();
    void measuredOnlyWithoutBudget();
    void emptyBarsLeftOut();
};

// A bar as the analysis names it: a fixed bar of the bar table, or a bar of class "x" ("x",
// "x inefficiency").
static WaterfallBar bar(const char* name, WaterfallBar::Kind kind, double ms)
{
    using gapscope::model::BarId;
    WaterfallBar b;
    b.name = QString::fromLatin1(name);
    b.kind = kind;
    b.ms = ms;
    for (const auto& info : gapscope::model::kBars)
        if (*info.name && !gapscope::model::isClassBar(info.id) && b.name == QLatin1String(info.name))
            b.id = info.id;
    const QString suffix = QString::fromLatin1(gapscope::model::barInfo(BarId::ClassInefficiency).name);
    if (b.id == BarId::None) {
        b.id = b.name.endsWith(suffix)             ? BarId::ClassInefficiency
            : kind == WaterfallBar::Kind::Measured ? BarId::ClassMeasured
                                                   : BarId::ClassBudget;
        b.className = b.id == BarId::ClassInefficiency ? b.name.chopped(suffix.size()) : b.name;
    }
    return b;
}

void TstWaterfallData::columnsFromKnownAnalysis()
{
    using K = WaterfallBar::Kind;
    WaterfallData d;
    // Bars as the analysis lists them (budget and gap bars interleaved per component).
    d.bars = { bar("attention", K::Budget, 1.0), bar("attention inefficiency", K::Gap, 0.5),
        bar("routed_experts", K::Budget, 2.0), bar("routed_experts inefficiency", K::Gap, 1.5),
        bar("collective wait", K::Gap, 3.0), bar("launch/host gaps", K::Gap, 2.0) };
    d.measuredMs = 10.0;
    QCOMPARE(d.budgetMs(), 3.0);
    QCOMPARE(d.barsTotalMs(), 10.0);
    const auto cols = d.columns();
    QCOMPARE(int(cols.size()), 8);
    const char* labels[] = { "attention", "routed_experts", "budget", "attention inefficiency",
        "routed_experts inefficiency", "collective wait", "launch/host gaps", "measured" };
    const double lows[] = { 0, 1, 0, 3, 3.5, 5, 8, 0 };
    const double highs[] = { 1, 3, 3, 3.5, 5, 8, 10, 10 };
    const int barIndex[] = { 0, 2, -1, 1, 3, 4, 5, -1 };
    for (int i = 0; i < 8; ++i) {
        QCOMPARE(cols[size_t(i)].label, QString::fromLatin1(labels[i]));
        QCOMPARE(cols[size_t(i)].low, lows[i]);
        QCOMPARE(cols[size_t(i)].high, highs[i]);
        QCOMPARE(cols[size_t(i)].bar, barIndex[i]);
        QCOMPARE(cols[size_t(i)].total, barIndex[i] < 0);
    }
    // A component's gap bar shares its colour.
    QCOMPARE(cols[0].color, cols[3].color);
    QCOMPARE(cols.back().high, d.measuredMs);
}

void TstWaterfallData::negativeGapFloatsDown()
{
    using K = WaterfallBar::Kind;
    WaterfallData d;
    d.bars = { bar("dense_ffn", K::Budget, 2.0), bar("dense_ffn inefficiency", K::Gap, -0.5),
        bar("step gap", K::Gap, 1.0) };
    const auto cols = d.columns();
    QCOMPARE(int(cols.size()), 5);
    QCOMPARE(cols[2].low, 1.5);
    QCOMPARE(cols[2].high, 2.0);
    QCOMPARE(cols[2].value, -0.5);
    QCOMPARE(cols[4].high, 2.5);
}

void TstWaterfallData::empty()
{
    WaterfallData d;
    const auto cols = d.columns();
    QCOMPARE(int(cols.size()), 1); // no budget bars: only the measured total
    QCOMPARE(cols[0].label, QStringLiteral("measured"));
    QCOMPARE(cols[0].high, 0.0);
}

void TstWaterfallData::measuredOnlyWithoutBudget()
{
    using K = WaterfallBar::Kind;
    WaterfallData d;
    d.bars = { bar("attention", K::Measured, 2.0), bar("launch/host gaps", K::Gap, 1.0) };
    const auto cols = d.columns();
    QCOMPARE(int(cols.size()), 3);
    QCOMPARE(cols[0].label, QStringLiteral("attention"));
    QCOMPARE(cols[1].low, 2.0);
    QCOMPARE(cols[2].label, QStringLiteral("measured"));
    QCOMPARE(cols[2].high, 3.0);
}

void TstWaterfallData::emptyBarsLeftOut()
{
    using K = WaterfallBar::Kind;
    WaterfallData d;
    WaterfallBar experts = bar("routed_experts", K::Budget, 0.0); // a dense model has none
    experts.zeroInEveryStep = true;
    WaterfallBar stalls = bar("sync stalls", K::Gap, 0.0); // 0 here, but not in every step
    WaterfallBar memops = bar("memory ops", K::Gap, 0.0);
    memops.zeroInEveryStep = true;
    d.bars = { bar("attention", K::Budget, 2.0), experts, bar("attention inefficiency", K::Gap, 1.5), stalls, memops };
    QCOMPARE(int(d.columns().size()), 7);
    const auto cols = d.columns(true);
    QStringList labels;
    for (const auto& c : cols)
        labels << c.label;
    QCOMPARE(labels,
        QStringList({ QStringLiteral("attention"), QStringLiteral("budget"), QStringLiteral("attention inefficiency"),
            QStringLiteral("sync stalls"), QStringLiteral("measured") }));
    QCOMPARE(cols[2].bar, 2); // columns still name their bar
    QCOMPARE(cols.back().high, 3.5);
}

QTEST_APPLESS_MAIN(TstWaterfallData)
#include "tst_waterfalldata.moc"
