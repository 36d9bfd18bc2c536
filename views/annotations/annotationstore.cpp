// SPDX-License-Identifier: MIT
#include "views/annotations/annotationstore.h"

#include "model/io/tracefile.h"

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

std::optional<gapscope::model::AnnotationSet> loadSidecar(const QString& tracePath, QString* error)
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
    auto set = gapscope::model::decodeAnnotations(bytes.toStdString(), path.toStdString());
    if (!set) {
        if (error)
            *error = QString::fromStdString(set.error());
        return std::nullopt;
    }
    return std::move(set).value();
}

bool saveSidecar(const QString& tracePath, const gapscope::model::AnnotationSet& set, QString* error)
{
    const QString path = sidecarPath(tracePath);
    QSaveFile f(path);
    const std::string bytes = gapscope::model::encodeSection(set);
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

SavedTo save(const QString& tracePath, const gapscope::model::AnnotationSet& set, QString* error)
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
