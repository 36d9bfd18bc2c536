// SPDX-License-Identifier: MIT
#include "views/annotationstore.h"

#include "model/tracefile.h"

#include <QFile>
#include <QFileInfo>
#include <QSaveFile>

namespace annotationstore {

namespace {
constexpr qint64 kMaxSidecarBytes = 64ll << 20; // notes are small; refuse anything absurd
}

QString sidecarPath(const QString& tracePath)
{
    return tracePath + QStringLiteral(".annotations");
}

std::optional<gapscope::pb::AnnotationSet> loadSidecar(const QString& tracePath, QString* error)
{
    const QString path = sidecarPath(tracePath);
    QFile f(path);
    if (!f.exists())
        return std::nullopt;
    if (f.size() > kMaxSidecarBytes) {
        if (error)
            *error = QStringLiteral("%1: %2 bytes is too large for an annotation file").arg(path).arg(f.size());
        return std::nullopt;
    }
    if (!f.open(QIODevice::ReadOnly)) {
        if (error)
            *error = QStringLiteral("%1: %2").arg(path, f.errorString());
        return std::nullopt;
    }
    const QByteArray bytes = f.readAll();
    gapscope::pb::AnnotationSet set;
    if (!set.ParseFromArray(bytes.constData(), int(bytes.size()))) {
        if (error)
            *error = QStringLiteral("%1: not an annotation set (protobuf parse failed)").arg(path);
        return std::nullopt;
    }
    return set;
}

bool saveSidecar(const QString& tracePath, const gapscope::pb::AnnotationSet& set, QString* error)
{
    const QString path = sidecarPath(tracePath);
    QSaveFile f(path);
    std::string bytes;
    if (!set.SerializeToString(&bytes)) {
        if (error)
            *error = QStringLiteral("%1: could not serialize the annotations").arg(path);
        return false;
    }
    if (!f.open(QIODevice::WriteOnly) || f.write(bytes.data(), qint64(bytes.size())) != qint64(bytes.size())
        || !f.commit()) {
        if (error)
            *error = QStringLiteral("%1: %2").arg(path, f.errorString());
        return false;
    }
    return true;
}

} // namespace annotationstore

namespace annotationstore {

SavedTo save(const QString& tracePath, const gapscope::pb::AnnotationSet& set, QString* error)
{
    const QFileInfo info(tracePath);
    QString traceError;
    if (tracePath.endsWith(QLatin1String(".gapscope")) && info.isWritable()
        && QFileInfo(info.absolutePath()).isWritable()) {
        const gapscope::Status s = gapscope::model::saveTraceSections(tracePath.toStdString(), &set, nullptr, nullptr);
        if (s)
            return SavedTo::TraceFile;
        traceError = QString::fromStdString(s.message());
    }
    QString sidecarError;
    if (saveSidecar(tracePath, set, &sidecarError))
        return SavedTo::Sidecar;
    if (error)
        *error = traceError.isEmpty() ? sidecarError : traceError + QStringLiteral("; ") + sidecarError;
    return SavedTo::None;
}

} // namespace annotationstore
