// SPDX-License-Identifier: MIT
#include "views/annotationmodel.h"

#include "views/timeformat.h"
#include "views/timelinerenderer.h"

#include <QDateTime>

#include <algorithm>

using namespace gapscope;

AnnotationModel::AnnotationModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

void AnnotationModel::setAnnotations(const pb::AnnotationSet& set, model::TimeNs origin)
{
    beginResetModel();
    m_set = set;
    m_origin = origin;
    m_modified = false;
    endResetModel();
    emit changed();
}

int AnnotationModel::add(pb::Annotation a)
{
    if (a.id() == 0) {
        uint64_t next = 1;
        for (const auto& x : m_set.annotations())
            next = std::max<uint64_t>(next, x.id() + 1);
        a.set_id(next);
    }
    if (a.created_unix_ns() == 0)
        a.set_created_unix_ns(QDateTime::currentMSecsSinceEpoch() * 1'000'000);
    if (a.end_ns() < a.start_ns())
        a.set_end_ns(a.start_ns());
    const int row = m_set.annotations_size();
    beginInsertRows({}, row, row);
    *m_set.add_annotations() = std::move(a);
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

void AnnotationModel::update(int row, const pb::Annotation& a)
{
    if (row < 0 || row >= rowCount())
        return;
    const uint64_t id = m_set.annotations(row).id();
    *m_set.mutable_annotations(row) = a;
    m_set.mutable_annotations(row)->set_id(id);
    touch(row);
}

void AnnotationModel::move(int row, model::TimeNs delta)
{
    if (row < 0 || row >= rowCount() || delta == 0)
        return;
    auto* a = m_set.mutable_annotations(row);
    a->set_start_ns(a->start_ns() + delta);
    a->set_end_ns(a->end_ns() + delta);
    touch(row);
}

void AnnotationModel::remove(int row)
{
    if (row < 0 || row >= rowCount())
        return;
    beginRemoveRows({}, row, row);
    m_set.mutable_annotations()->DeleteSubrange(row, 1);
    endRemoveRows();
    m_modified = true;
    emit changed();
}

int AnnotationModel::rowOfId(uint64_t id) const
{
    for (int i = 0; i < m_set.annotations_size(); ++i) {
        if (m_set.annotations(i).id() == id)
            return i;
    }
    return -1;
}

int AnnotationModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : m_set.annotations_size();
}

int AnnotationModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant AnnotationModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || index.row() >= rowCount() || index.column() >= ColumnCount)
        return {};
    const pb::Annotation& a = m_set.annotations(index.row());
    const double length = double(a.end_ns() - a.start_ns());
    if (role == Qt::DecorationRole && index.column() == Text)
        return TimelineRenderer::annotationColor(a.color_rgba());
    if (role == Qt::UserRole) {
        switch (index.column()) {
        case Start:
            return qlonglong(a.start_ns() - m_origin);
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
        return QStringLiteral("+") + timeformat::duration(double(a.start_ns() - m_origin), 6);
    case Length:
        return length > 0 ? timeformat::duration(length) : tr("point");
    case Lane:
        return a.lane_key().empty() ? tr("all lanes") : QString::fromStdString(a.lane_key());
    case Text:
        return QString::fromStdString(a.text());
    }
    return {};
}

bool AnnotationModel::setData(const QModelIndex& index, const QVariant& value, int role)
{
    if (!index.isValid() || index.row() >= rowCount())
        return false;
    auto* a = m_set.mutable_annotations(index.row());
    if (index.column() == Text && role == Qt::EditRole) {
        a->set_text(value.toString().toStdString());
    } else if (index.column() == Text && role == Qt::DecorationRole && value.canConvert<QColor>()) {
        a->set_color_rgba(TimelineRenderer::annotationRgba(value.value<QColor>()));
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
