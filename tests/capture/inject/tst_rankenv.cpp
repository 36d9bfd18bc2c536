// SPDX-License-Identifier: MIT
#include "capture/inject/rankenv.h"

#include <QtTest>
#include <map>

using namespace gapscope::capture::inject;

class TstRankEnv : public QObject {
    Q_OBJECT
private slots:
    void parse_data()
    {
        QTest::addColumn<QString>("env");
        QTest::addColumn<int>("rank");
        QTest::addColumn<int>("world");
        QTest::addColumn<int>("local");
        QTest::addColumn<QString>("source");
        QTest::newRow("torchrun") << "RANK=3 WORLD_SIZE=8 LOCAL_RANK=3" << 3 << 8 << 3 << "RANK";
        QTest::newRow("open mpi") << "OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_LOCAL_RANK=1" << 1
                                  << 2 << 1 << "OMPI_COMM_WORLD_RANK";
        QTest::newRow("slurm") << "SLURM_PROCID=5 SLURM_NTASKS=16 SLURM_LOCALID=1" << 5 << 16 << 1 << "SLURM_PROCID";
        QTest::newRow("torchrun wins over slurm") << "SLURM_PROCID=5 RANK=0 WORLD_SIZE=2" << 0 << 2 << -1 << "RANK";
        QTest::newRow("garbage rank skipped") << "RANK=abc PMI_RANK=2 PMI_SIZE=4" << 2 << 4 << -1 << "PMI_RANK";
        QTest::newRow("size not above rank") << "RANK=4 WORLD_SIZE=4" << 4 << 0 << -1 << "RANK";
        QTest::newRow("nothing") << "" << -1 << 0 << -1 << "";
        QTest::newRow("local rank only") << "LOCAL_RANK=1" << -1 << 0 << 1 << "";
    }
    void parse()
    {
        QFETCH(QString, env);
        QFETCH(int, rank);
        QFETCH(int, world);
        QFETCH(int, local);
        QFETCH(QString, source);
        std::map<std::string, std::string> vars;
        for (const QString& kv : env.split(' ', Qt::SkipEmptyParts)) {
            const auto parts = kv.split('=');
            vars[parts[0].toStdString()] = parts[1].toStdString();
        }
        const RankEnv r = rankFromEnvironment([&](const char* name) -> const char* {
            auto it = vars.find(name);
            return it == vars.end() ? nullptr : it->second.c_str();
        });
        QCOMPARE(r.rank, rank);
        QCOMPARE(r.worldSize, world);
        QCOMPARE(r.localRank, local);
        QCOMPARE(QString::fromStdString(r.source), source);
    }
};

QTEST_APPLESS_MAIN(TstRankEnv)
#include "tst_rankenv.moc"
