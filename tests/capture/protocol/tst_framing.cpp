// SPDX-License-Identifier: MIT
// Protocol plumbing: frames survive any split of the byte stream, limits hold, addresses parse,
// tokens load and compare, the socket path follows the environment.
#include "capture/protocol/endpoint.h"
#include "capture/protocol/framedecoder.h"
#include "capture/protocol/framing.h"
#include "capture/protocol/protocol.pb.h"
#include "capture/protocol/socketpath.h"
#include "capture/protocol/tokenauth.h"

#include <QtTest>

#include <fstream>
#include <sys/stat.h>

using namespace gapscope;
using namespace gapscope::capture;

class TestFraming : public QObject {
    Q_OBJECT
private slots:
    void roundTripAnySplit_data()
    {
        QTest::addColumn<int>("piece");
        QTest::newRow("byte by byte") << 1;
        QTest::newRow("3 bytes") << 3;
        QTest::newRow("large pieces") << 20;
    }
    void roundTripAnySplit()
    {
        QFETCH(int, piece);
        std::string bytes;
        for (int i = 0; i < 3; ++i) {
            wire::RankToAgent m;
            m.mutable_step()->set_local_index(uint64_t(100 + i));
            m.mutable_step()->set_time_ns(int64_t(i) * 1000);
            QVERIFY(appendFrame(m, bytes, kMaxRankFrameBytes).isOk());
        }
        wire::RankToAgent empty; // an empty envelope is a zero-length frame
        QVERIFY(appendFrame(empty, bytes, kMaxRankFrameBytes).isOk());
        FrameDecoder dec(kMaxRankFrameBytes);
        std::vector<wire::RankToAgent> got;
        for (size_t at = 0; at < bytes.size(); at += size_t(piece)) {
            dec.append(bytes.data() + at, std::min(size_t(piece), bytes.size() - at));
            std::string_view p;
            while (dec.next(p) == FrameDecoder::Result::Frame) {
                wire::RankToAgent m;
                QVERIFY(parseFrame(p, m, "test").isOk());
                got.push_back(m);
            }
        }
        QCOMPARE(int(got.size()), 4);
        for (int i = 0; i < 3; ++i)
            QCOMPARE(got[size_t(i)].step().local_index(), uint64_t(100 + i));
        QVERIFY(!got[3].has_step());
        QCOMPARE(dec.buffered(), size_t(0));
    }

    void limits()
    {
        FrameDecoder dec(16);
        const char header[4] = { 17, 0, 0, 0 };
        dec.append(header, 4);
        std::string_view p;
        QVERIFY(dec.next(p) == FrameDecoder::Result::TooLarge);
        QCOMPARE(dec.rejectedLength(), 17u);
        QVERIFY(dec.next(p) == FrameDecoder::Result::TooLarge); // stays failed
        wire::ClientToAgent big;
        big.mutable_hello()->set_token(std::string(100, 'x'));
        std::string out;
        const Status s = appendFrame(big, out, 64);
        QVERIFY(!s.isOk());
        QVERIFY(QString::fromStdString(s.message()).contains("exceed"));
        QVERIFY(out.empty());
        wire::ClientToAgent m;
        const Status bad = parseFrame(std::string_view("\xff\xff\xff", 3), m, "peer");
        QVERIFY(!bad.isOk());
        QVERIFY(QString::fromStdString(bad.message()).startsWith("peer: malformed"));
    }

    void endpoints_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("normal"); // empty: parse error
        QTest::addColumn<bool>("loopback");
        QTest::newRow("v4") << "127.0.0.1:7433"
                            << "127.0.0.1:7433" << true;
        QTest::newRow("other 127/8") << "127.1.2.3:1"
                                     << "127.1.2.3:1" << true;
        QTest::newRow("name, default port") << "gpu-box"
                                            << "gpu-box:7433" << false;
        QTest::newRow("port only") << ":9000"
                                   << "127.0.0.1:9000" << true;
        QTest::newRow("v6") << "[::1]:8000"
                            << "[::1]:8000" << true;
        QTest::newRow("any v4") << "0.0.0.0:0"
                                << "0.0.0.0:0" << false;
        QTest::newRow("localhost") << "localhost:1"
                                   << "localhost:1" << true;
        QTest::newRow("bad port") << "host:99999"
                                  << "" << false;
        QTest::newRow("bare v6") << "::1:80"
                                 << "" << false;
        QTest::newRow("open bracket") << "[::1:80"
                                      << "" << false;
    }
    void endpoints()
    {
        QFETCH(QString, text);
        QFETCH(QString, normal);
        QFETCH(bool, loopback);
        auto e = Endpoint::parse(text.toStdString());
        QCOMPARE(e.hasValue(), !normal.isEmpty());
        if (!e)
            return;
        QCOMPARE(QString::fromStdString(e->toString()), normal);
        QCOMPARE(e->isLoopback(), loopback);
    }

    void decoderLimitsAndMemory()
    {
        // A rank's first frame may have 64 KiB; after Register the limit rises to 16 MiB.
        FrameDecoder dec(kMaxRankRegisterFrameBytes);
        std::string big(4, '\0');
        putU32LE(&big[0], 100000);
        big += std::string(100000, 'z');
        dec.append(big.data(), big.size());
        std::string_view payload;
        QCOMPARE(dec.next(payload), FrameDecoder::Result::TooLarge);
        QCOMPARE(dec.rejectedLength(), uint32_t(100000));
        FrameDecoder raised(kMaxRankRegisterFrameBytes);
        raised.setLimit(kMaxRankFrameBytes);
        raised.append(big.data(), big.size());
        QCOMPARE(raised.next(payload), FrameDecoder::Result::Frame);
        QCOMPARE(payload.size(), size_t(100000));
        QCOMPARE(raised.next(payload), FrameDecoder::Result::NeedMore);
        QVERIFY(raised.memoryBytes() >= 100000);
        raised.releaseIdle(); // nothing buffered: the memory goes back
        QVERIFY(raised.memoryBytes() < 64); // what an empty string keeps inline
        raised.append(big.data(), 10); // a partial frame is kept by releaseIdle, dropped by discard
        raised.releaseIdle();
        QCOMPARE(raised.buffered(), size_t(10));
        raised.discard();
        QCOMPARE(raised.buffered(), size_t(0));
        QVERIFY(raised.memoryBytes() < 64); // what an empty string keeps inline
    }

    void tokens()
    {
        QTemporaryDir dir;
        const std::string path = dir.path().toStdString() + "/tok";
        auto missing = loadToken(path, false);
        QVERIFY(!missing.hasValue());
        auto created = loadToken(path, true);
        QVERIFY(created.hasValue());
        QCOMPARE(int(created->size()), 64);
        auto again = loadToken(path, true);
        QVERIFY(again.hasValue());
        QCOMPARE(*again, *created);
        const std::string shortPath = dir.path().toStdString() + "/short";
        std::ofstream(shortPath) << "abc\n";
        ::chmod(shortPath.c_str(), 0600);
        auto tooShort = loadToken(shortPath, false);
        QVERIFY(!tooShort.hasValue());
        QVERIFY(QString::fromStdString(tooShort.error()).contains("too short"));
        QVERIFY(tokenMatches(*created, *created));
        QVERIFY(!tokenMatches(*created, created->substr(0, 63)));
        QVERIFY(!tokenMatches(*created, *created + "0"));
    }

    void socketPath()
    {
        qputenv("GAPSCOPE_AGENT_SOCKET", "/tmp/x/custom.sock");
        QCOMPARE(QString::fromStdString(defaultAgentSocketPath()), QString("/tmp/x/custom.sock"));
        qunsetenv("GAPSCOPE_AGENT_SOCKET");
        qputenv("XDG_RUNTIME_DIR", "/run/user/1234");
        QCOMPARE(QString::fromStdString(defaultAgentSocketPath()), QString("/run/user/1234/gapscope/agent.sock"));
        qunsetenv("XDG_RUNTIME_DIR");
        QVERIFY(QString::fromStdString(defaultAgentSocketPath()).startsWith("/tmp/gapscope-"));
        QTemporaryDir dir;
        const std::string sock = dir.path().toStdString() + "/sub/agent.sock";
        QVERIFY(prepareSocketDirectory(sock).isOk());
        QVERIFY(QFileInfo(dir.path() + "/sub").isDir());
        QCOMPARE(int(QFileInfo(dir.path() + "/sub").permissions() & 0x0077), 0); // 0700
        // A folder others can write to is refused, naming its mode.
        QCOMPARE(::chmod((dir.path() + "/sub").toLocal8Bit().constData(), 0775), 0);
        const Status refused = prepareSocketDirectory(sock);
        QVERIFY(!refused.isOk());
        QVERIFY2(QString::fromStdString(refused.message())
                     .contains("/sub: writable by other users (mode 0775); refusing to put the agent socket there"),
            refused.message().c_str());
    }
};

QTEST_GUILESS_MAIN(TestFraming)
#include "tst_framing.moc"
