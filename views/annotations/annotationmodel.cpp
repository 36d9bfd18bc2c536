// SPDX-License-Identifier: MIT
#include "views/annotations/annotationmodel.h"

#include "views/common/timeformat.h"
#include "views/timeline/timelinerenderer.h"

#include <QDateTime>

#include <algorithm>

using namespace gapscope;

AnnotationModel::AnnotationModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

void AnnotationModel::setAnnotations(const model::AnnotationSet& set, model::TimeNs origin)
{
    beginResetModel();
    m_set = set;
    m_origin = origin;
    m_modified = false;
    endResetModel();
    emit changed();
}

int AnnotationModel::add(model::Annotation a)
{
    if (a.id == 0) {
        uint64_t next = 1;
        for (const auto& x : m_set.notes)
            next = std::max<uint64_t>(next, x.id + 1);
        a.id = next;
    }
    if (a.createdUnixNs == 0)
        a.createdUnixNs = QDateTime::currentMSecsSinceEpoch() * 1'000'000;
    if (a.endNs < a.startNs)
        a.endNs = a.startNs;
    const int row = int(m_set.notes.size());
    beginInsertRows({}, row, row);
    m_set.notes.push_back(std::move(a));
    endInsertRows();
    m_modified = true;
    emit changed();
    return row;
}

void AnnotationModel::touch(int row)
{
    m_modified = true;
    emit dataChanged(index(row, 0), index(row, ColumnCount - 1));
    emit changed();
}

void AnnotationModel::update(int row, const model::Annotation& a)
{
    if (row < 0 || row >= rowCount())
        return;
    const uint64_t id = m_set.notes[size_t(row)].id;
    m_set.notes[size_t(row)] = a;
    m_set.notes[size_t(row)].id = id;
    touch(row);
}

void AnnotationModel::move(int row, model::TimeNs delta)
{
    if (row < 0 || row >= rowCount() || delta == 0)
        return;
    model::Annotation* a = &m_set.notes[size_t(row)];
    a->startNs = a->startNs + delta;
    a->endNs = a->endNs + delta;
    touch(row);
}

void AnnotationModel::remove(int row)
{
    if (row < 0 || row >= rowCount())
        return;
    beginRemoveRows({}, row, row);
    m_set.notes.erase(m_set.notes.begin() + row);
    endRemoveRows();
    m_modified = true;
    emit changed();
}

void AnnotationModel::setStepRule(const std::string& rule)
{
    if (rule == m_set.stepRule)
        return;
    m_set.stepRule = rule;
    m_modified = true;
}

int AnnotationModel::rowOfId(uint64_t id) const
{
    for (int i = 0; i < int(m_set.notes.size()); ++i) {
        if (m_set.notes[size_t(i)].id == id)
            return i;
    }
    return -1;
}

int AnnotationModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : int(m_set.notes.size());
}

int AnnotationModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant AnnotationModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || index.row() >= rowCount() || index.column() >= ColumnCount)
        return {};
    const model::Annotation& a = m_set.notes[size_t(index.row())];
    const double length = double(a.endNs - a.startNs);
    if (role == Qt::DecorationRole && index.column() == Text)
        return TimelineRenderer::annotationColor(a.colorRgba);
    if (role == Qt::UserRole) {
        switch (index.column()) {
        case Start:
            return qlonglong(a.startNs - m_origin);
        case Length:
            return length;
        default:
            break;
        }
    }
    if (role != Qt::DisplayRole && role != Qt::EditRole && role != Qt::UserRole && role != Qt::ToolTipRole)
        return {};
    switch (index.column()) {
    case Start:
        return QStringLiteral("+") + timeformat::duration(double(a.startNs - m_origin), 6);
    case Length:
        return length > 0 ? timeformat::duration(length) : tr("point");
    case Lane:
        return a.laneKey.empty() ? tr("all lanes") : QString::fromStdString(a.laneKey);
    case Text:
        return QString::fromStdString(a.text);
    }
    return {};
}

bool AnnotationModel::setData(const QModelIndex& index, const QVariant& value, int role)
{
    if (!index.isValid() || index.row() >= rowCount())
        return false;
    model::Annotation* a = &m_set.notes[size_t(index.row())];
    if (index.column() == Text && role == Qt::EditRole) {
        a->text = value.toString().toStdString();
    } else if (index.column() == Text && role == Qt::DecorationRole && value.canConvert<QColor>()) {
        a->colorRgba = TimelineRenderer::annotationRgba(value.value<QColor>());
    } else {
        return false;
    }
    touch(index.row());
    return true;
}

Qt::ItemFlags AnnotationModel::flags(const QModelIndex& index) const
{
    if (!index.isValid())
        return Qt::NoItemFlags;
    Qt::ItemFlags f = Qt::ItemIsEnabled | Qt::ItemIsSelectable;
    if (index.column() == Text)
        f |= Qt::ItemIsEditable;
    return f;
}

QVariant AnnotationModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case Start:
        return tr("start");
    case Length:
        return tr("length");
    case Lane:
        return tr("lane");
    case Text:
        return tr("note");
    }
    return {};
}
