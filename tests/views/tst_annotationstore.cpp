// SPDX-License-Identifier: MIT
// Annotations round-trip: through the trace file's section, and through the sidecar file.
#include "views/annotations/annotationmodel.h"
#include "views/annotations/annotationstore.h"

#include "model/io/tracefile.h"
#include "tests/unprivileged.h"
#include "testtrace.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <unistd.h>

using namespace gapscope;

class TstAnnotationStore : public QObject {
    Q_OBJECT
private slots:
    void roundTripThroughTraceFile();
    void roundTripThroughSidecar();
    void readOnlyTraceUsesSidecar();
    void corruptSidecarIsReported();
    void noSidecar();
};

static model::AnnotationSet sampleSet()
{
    AnnotationModel model;
    model.setAnnotations({}, testtrace::kT0);
    model::Annotation a;
    a.startNs = testtrace::kT0 + 12'000;
    a.endNs = testtrace::kT0 + 30'000;
    a.laneKey = "r0/gpu/d0/7";
    a.text = "AllReduce waits for rank 1";
    a.colorRgba = 0xff00ffff;
    model.add(a);
    model::Annotation p;
    p.startNs = testtrace::kT0 + 100'000;
    p.endNs = testtrace::kT0 + 100'000;
    p.text = "host gap, ünïcödé";
    model.add(p);
    model.setStepRule("nvtx:decode_step"); // the Steps menu's choice travels with the notes
    return model.annotations();
}

static bool equal(const model::AnnotationSet& a, const model::AnnotationSet& b)
{
    return a == b;
}

void TstAnnotationStore::roundTripThroughTraceFile()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("t.gapscope"));
    QVERIFY(model::writeTraceFile(testtrace::make(), path.toStdString()));
    const model::AnnotationSet set = sampleSet();
    QString error;
    QCOMPARE(annotationstore::save(path, set, &error), annotationstore::SavedTo::TraceFile);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    QVERIFY(!QFile::exists(annotationstore::sidecarPath(path)));
    auto back = model::readTraceFile(path.toStdString());
    QVERIFY2(back, back.error().c_str());
    QCOMPARE(back->annotations().notes.size(), size_t(2));
    QCOMPARE(back->annotations().stepRule, std::string("nvtx:decode_step"));
    QVERIFY(equal(back->annotations(), set));
    // The events survived the rewrite.
    QCOMPARE(back->eventCount(), testtrace::make().eventCount());
}

void TstAnnotationStore::roundTripThroughSidecar()
{
    QTemporaryDir dir;
    // An imported trace (not a .gapscope file) keeps its notes beside it.
    const QString path = dir.filePath(QStringLiteral("rank0.pt.trace.json"));
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("{}");
    f.close();
    const model::AnnotationSet set = sampleSet();
    QString error;
    QCOMPARE(annotationstore::save(path, set, &error), annotationstore::SavedTo::Sidecar);
    QCOMPARE(annotationstore::sidecarPath(path), path + QStringLiteral(".annotations"));
    auto back = annotationstore::loadSidecar(path, &error);
    QVERIFY(back);
    QVERIFY(error.isEmpty());
    QCOMPARE(back->stepRule, std::string("nvtx:decode_step"));
    QVERIFY(equal(*back, set));
}

void TstAnnotationStore::readOnlyTraceUsesSidecar()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("ro.gapscope"));
    QVERIFY(model::writeTraceFile(testtrace::make(), path.toStdString()));
    // Readable by everyone, writable by nobody; the folder open to all (the sidecar goes there).
    QFile::setPermissions(path, QFileDevice::ReadOwner | QFileDevice::ReadGroup | QFileDevice::ReadOther);
    QFile::setPermissions(dir.path(), QFileDevice::Permissions(0x7777));
    QString error;
    {
        test::Unprivileged user; // root ignores file permissions
        if (!user.ok())
            QSKIP("running as root without the right to switch users: permissions cannot be tested");
        QCOMPARE(annotationstore::save(path, sampleSet(), &error), annotationstore::SavedTo::Sidecar);
    }
    QVERIFY(QFile::exists(annotationstore::sidecarPath(path)));
}

void TstAnnotationStore::corruptSidecarIsReported()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("x.gapscope"));
    QFile f(annotationstore::sidecarPath(path));
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("\xff\xff\xff\xff not a protobuf");
    f.close();
    QString error;
    QVERIFY(!annotationstore::loadSidecar(path, &error));
    QVERIFY2(error.contains(QStringLiteral("x.gapscope.annotations")) && error.contains(QStringLiteral("parse")),
        qPrintable(error));
}

void TstAnnotationStore::noSidecar()
{
    QTemporaryDir dir;
    QString error;
    QVERIFY(!annotationstore::loadSidecar(dir.filePath(QStringLiteral("none.gapscope")), &error));
    QVERIFY(error.isEmpty());
}

QTEST_APPLESS_MAIN(TstAnnotationStore)
#include "tst_annotationstore.moc"
