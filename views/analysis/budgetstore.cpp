// SPDX-License-Identifier: MIT
#include "views/analysis/budgetstore.h"

#include "model/io/tracefile.h"

#include <QFile>
#include <QFileInfo>
#include <QSaveFile>

namespace budgetstore {
namespace {
constexpr qint64 kMaxSidecarBytes = 16ll << 20; // a config and a hardware table: small
}

QString sidecarPath(const QString& tracePath)
{
    return tracePath + QStringLiteral(".budget");
}

std::optional<gapscope::model::BudgetSettings> loadSidecar(const QString& tracePath, QString* error)
{
    const QString path = sidecarPath(tracePath);
    QFile f(path);
    if (!f.exists())
        return std::nullopt;
    auto fail = [&](const QString& why) {
        if (error)
            *error = QStringLiteral("%1: %2").arg(path, why);
        return std::nullopt;
    };
    if (f.size() > kMaxSidecarBytes)
        return fail(QStringLiteral("%1 bytes is too large for budget settings").arg(f.size()));
    if (!f.open(QIODevice::ReadOnly))
        return fail(f.errorString());
    const QByteArray bytes = f.readAll();
    auto settings = gapscope::model::decodeBudgetSettings(bytes.toStdString(), path.toStdString());
    if (!settings) {
        if (error)
            *error = QString::fromStdString(settings.error());
        return std::nullopt;
    }
    return std::move(settings).value();
}

SavedTo save(const QString& tracePath, const gapscope::model::BudgetSettings& settings, QString* error)
{
    const QFileInfo info(tracePath);
    QString traceError;
    if (tracePath.endsWith(QLatin1String(".gapscope")) && info.isWritable()
        && QFileInfo(info.absolutePath()).isWritable()) {
        const gapscope::Status s
            = gapscope::model::saveTraceSections(tracePath.toStdString(), nullptr, &settings, nullptr);
        if (s) {
            QFile::remove(sidecarPath(tracePath)); // the file now holds what was saved last
            return SavedTo::TraceFile;
        }
        traceError = QString::fromStdString(s.message());
    }
    const QString path = sidecarPath(tracePath);
    const std::string bytes = gapscope::model::encodeSection(settings);
    QSaveFile f(path);
    if (f.open(QIODevice::WriteOnly)
        && f.write(bytes.data(), qint64(bytes.size())) == qint64(bytes.size()) && f.commit())
        return SavedTo::Sidecar;
    if (error) {
        const QString sidecarError = QStringLiteral("%1: %2").arg(path, f.errorString());
        *error = traceError.isEmpty() ? sidecarError : traceError + QStringLiteral("; ") + sidecarError;
    }
    return SavedTo::None;
}

} // namespace budgetstore
