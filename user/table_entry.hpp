// What iterating the model's tables (HandleTable, ObjectTable) yields: {key, value&}, bound as
// `const auto &[k, v]` like a std::map entry, and what their iterators' operator-> returns.
#pragma once

namespace gw
{

template <class K, class Ref> struct TableEntry {
	K first;
	Ref second;
};

template <class K, class Ref> struct TableArrow {
	TableEntry<K, Ref> e;
	TableEntry<K, Ref> *operator->() { return &e; }
};

} // namespace gw
