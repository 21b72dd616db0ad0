// An ordered map in a B+ tree: the part of std::map the model uses, for its two hot trees
// (a process's mappings by address, a DRM file's fake offsets).
//
// Why: at 10^5 live handles the model is about two thirds of this machine's last-level cache,
// and a red-black tree costs one likely cache miss per level: about 10 levels for a process's
// 1000 mappings, 17 at 10^5. A B+ tree keeps many keys per node in one array, so a lookup of
// one of 1000 loads about 3 nodes. Entries
// live in the leaves, which are linked for iteration; inner nodes hold only separator keys.
// The standard library has no B-tree, and the project's dependencies (libbpf, libdrm, CLI11,
// nlohmann-json, GoogleTest) none either.
//
// The interface differs from std::map in what the model never relied on:
// - Iterators are invalidated by every insertion and erasure, as in absl::btree_map. erase()
//   returns the iterator to the next entry, which is what the model's loops use.
// - Iterating yields {first, second} by value (a key copy and a reference to the value), bound
//   as `const auto &[k, v]` like a std::map entry (see table_entry.hpp).
//
// Slots past a node's count hold default or moved-from values: entries move with std::move.
//
// Leaves hold between half and all of their capacity except the tree's first and last leaf,
// which may hold fewer (an append at either end splits the end leaf unevenly, so keys that
// arrive in order fill their leaves); inner nodes hold at least half. So a map's nodes are
// at least about half full whatever the order of insertions and erasures.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "table_entry.hpp"

namespace gw
{

// Entries per leaf: about 768 bytes of keys and values, at least 8, at most 64.
template <class K, class V> inline constexpr int kBTreeLeaf = std::clamp<int>(768 / (sizeof(K) + sizeof(V)), 8, 64);

template <class K, class V, int kLeaf = kBTreeLeaf<K, V>, int kInner = 16> class BTreeMap
{
	static_assert(kLeaf >= 3 && kInner >= 3, "a node must split into two nodes of at least one entry");
	static_assert(std::is_default_constructible_v<K> && std::is_default_constructible_v<V>);

	struct Inner;
	struct Node {
		Inner *parent = nullptr;
		int n = 0; // entries (leaf) or separator keys (inner: n + 1 children)
		bool leaf = true;
	};
	struct Leaf : Node {
		Leaf *prev = nullptr, *next = nullptr;
		K keys[kLeaf];
		V vals[kLeaf];
	};
	// kids[i] holds the keys k with keys[i - 1] <= k < keys[i].
	struct Inner : Node {
		Inner() { this->leaf = false; }
		K keys[kInner];
		Node *kids[kInner + 1];
	};
	static constexpr int kMinLeaf = kLeaf / 2;
	static constexpr int kMinInner = kInner / 2;

public:
	using key_type = K;
	using mapped_type = V;
	using size_type = std::size_t;

	template <bool Const> class Iter
	{
		using LeafP = std::conditional_t<Const, const Leaf *, Leaf *>;
		using Ref = std::conditional_t<Const, const V &, V &>;

	public:
		using iterator_category = std::bidirectional_iterator_tag;
		using difference_type = std::ptrdiff_t;
		using value_type = TableEntry<K, Ref>;
		using reference = value_type;
		using pointer = TableArrow<K, Ref>;

		Iter() = default;
		template <bool C = Const, class = std::enable_if_t<C>>
		Iter(const Iter<false> &o) : leaf_(o.leaf_), i_(o.i_)
		{
		}

		value_type operator*() const { return {leaf_->keys[i_], leaf_->vals[i_]}; }
		pointer operator->() const { return {**this}; }
		Iter &operator++()
		{
			if (++i_ == leaf_->n && leaf_->next) {
				leaf_ = leaf_->next;
				i_ = 0;
			}
			return *this;
		}
		Iter operator++(int)
		{
			Iter old = *this;
			++*this;
			return old;
		}
		Iter &operator--()
		{
			if (i_ == 0) {
				leaf_ = leaf_->prev;
				i_ = leaf_->n;
			}
			--i_;
			return *this;
		}
		Iter operator--(int)
		{
			Iter old = *this;
			--*this;
			return old;
		}
		bool operator==(const Iter &o) const { return leaf_ == o.leaf_ && i_ == o.i_; }
		bool operator!=(const Iter &o) const { return !(*this == o); }

	private:
		friend class BTreeMap;
		template <bool> friend class Iter;
		// Past the end of a leaf that is not the last is the next leaf's first entry: one
		// position, one value (end() is past the last leaf's last entry).
		Iter(LeafP leaf, int i) : leaf_(leaf), i_(i)
		{
			if (leaf_ && i_ == leaf_->n && leaf_->next) {
				leaf_ = leaf_->next;
				i_ = 0;
			}
		}
		LeafP leaf_ = nullptr;
		int i_ = 0;
	};
	using iterator = Iter<false>;
	using const_iterator = Iter<true>;

	BTreeMap() = default;
	BTreeMap(const BTreeMap &o) { copy_from(o); }
	BTreeMap(BTreeMap &&o) noexcept { steal(o); }
	BTreeMap &operator=(const BTreeMap &o)
	{
		if (this != &o) {
			BTreeMap tmp(o);
			clear();
			steal(tmp);
		}
		return *this;
	}
	BTreeMap &operator=(BTreeMap &&o) noexcept
	{
		if (this != &o) {
			clear();
			steal(o);
		}
		return *this;
	}
	~BTreeMap() { clear(); }

	iterator begin() { return {first_, 0}; }
	iterator end() { return {last_, last_ ? last_->n : 0}; }
	const_iterator begin() const { return {first_, 0}; }
	const_iterator end() const { return {last_, last_ ? last_->n : 0}; }

	size_type size() const { return size_; }
	bool empty() const { return size_ == 0; }

	void clear()
	{
		if (root_)
			destroy(root_);
		root_ = nullptr;
		first_ = last_ = nullptr;
		size_ = 0;
	}

	iterator lower_bound(const K &k) { return find_pos<false>(k, &lower); }
	const_iterator lower_bound(const K &k) const { return const_cast<BTreeMap *>(this)->lower_bound(k); }
	iterator upper_bound(const K &k) { return find_pos<false>(k, &upper); }
	const_iterator upper_bound(const K &k) const { return const_cast<BTreeMap *>(this)->upper_bound(k); }
	iterator find(const K &k) { return find_pos<true>(k, &lower); }
	const_iterator find(const K &k) const { return const_cast<BTreeMap *>(this)->find(k); }
	size_type count(const K &k) const { return find(k) != end(); }

	V &at(const K &k)
	{
		auto it = find(k);
		if (it == end())
			throw std::out_of_range("BTreeMap::at: no such key");
		return it->second;
	}
	const V &at(const K &k) const { return const_cast<BTreeMap *>(this)->at(k); }
	V &operator[](const K &k) { return try_emplace(k).first->second; }

	// Inserts {k, V(args...)} unless k is there; the entry with key k, and whether it is new.
	template <class... Args> std::pair<iterator, bool> try_emplace(const K &k, Args &&...args)
	{
		if (!root_)
			root_ = first_ = last_ = new Leaf;
		Leaf *l = descend(k);
		int i = lower(l->keys, l->n, k);
		if (i < l->n && l->keys[i] == k)
			return {iterator(l, i), false};
		if (l->n == kLeaf) {
			// in order at either end of the map: leave the full leaf full
			int keep = (l == last_ && i == kLeaf) ? kLeaf : (l == first_ && i == 0) ? 0 : kLeaf / 2;
			Leaf *r = split_leaf(l, keep, keep == kLeaf ? k : l->keys[keep]);
			if (i > keep || keep == kLeaf) {
				i -= keep;
				l = r;
			}
		}
		std::move_backward(l->keys + i, l->keys + l->n, l->keys + l->n + 1);
		std::move_backward(l->vals + i, l->vals + l->n, l->vals + l->n + 1);
		l->keys[i] = k;
		l->vals[i] = V(std::forward<Args>(args)...);
		++l->n;
		++size_;
		return {iterator(l, i), true};
	}
	std::pair<iterator, bool> emplace(const K &k, const V &v) { return try_emplace(k, v); }

	// Removes the entry at `it`; the iterator to the entry after it.
	iterator erase(const_iterator cit)
	{
		Leaf *l = const_cast<Leaf *>(cit.leaf_);
		int i = cit.i_;
		std::move(l->keys + i + 1, l->keys + l->n, l->keys + i);
		std::move(l->vals + i + 1, l->vals + l->n, l->vals + i);
		--l->n;
		l->vals[l->n] = V{}; // the vacated slot: moved from, or (the last entry) still holding the value
		--size_;
		if (l == root_) {
			if (l->n == 0) {
				clear();
				return end();
			}
			return iterator(l, i);
		}
		if (l->n >= kMinLeaf)
			return iterator(l, i);
		// Rebalancing moves entries between leaves: find the next entry again by its key.
		const Leaf *nl = i < l->n ? l : l->next;
		if (!nl) {
			rebalance(l);
			return end();
		}
		K next = nl->keys[i < l->n ? i : 0];
		rebalance(l);
		return lower_bound(next);
	}
	iterator erase(iterator it) { return erase(const_iterator(it)); }
	size_type erase(const K &k)
	{
		auto it = find(k);
		if (it == end())
			return 0;
		erase(it);
		return 1;
	}

	// Leaves in the chain (for tests: how full the nodes are).
	size_type leaves() const
	{
		size_type n = 0;
		for (const Leaf *l = first_; l; l = l->next)
			++n;
		return n;
	}

	// The structure's invariants (for tests): keys ordered across the leaf chain, every key
	// within its separators, parents, occupancy, size. False at the first one broken.
	bool check() const
	{
		if (!root_)
			return !first_ && !last_ && size_ == 0;
		if (root_->parent)
			return false;
		const Leaf *prev = nullptr;
		size_type seen = 0;
		if (!check_node(root_, nullptr, nullptr, prev, seen) || prev != last_ || seen != size_)
			return false;
		return !first_->prev && !last_->next;
	}

private:
	static int lower(const K *keys, int n, const K &k)
	{
		return static_cast<int>(std::lower_bound(keys, keys + n, k) - keys);
	}
	static int upper(const K *keys, int n, const K &k)
	{
		return static_cast<int>(std::upper_bound(keys, keys + n, k) - keys);
	}

	Leaf *descend(const K &k) const
	{
		Node *n = root_;
		while (!n->leaf) {
			auto *in = static_cast<Inner *>(n);
			n = in->kids[upper(in->keys, in->n, k)];
		}
		return static_cast<Leaf *>(n);
	}

	template <bool Exact> iterator find_pos(const K &k, int (*pos)(const K *, int, const K &))
	{
		if (!root_)
			return end();
		Leaf *l = descend(k);
		int i = pos(l->keys, l->n, k);
		if (Exact && (i == l->n || l->keys[i] != k))
			return end();
		return iterator(l, i);
	}

	static int child_index(const Inner *p, const Node *c)
	{
		int i = 0;
		while (p->kids[i] != c)
			++i;
		return i;
	}

	// Moves l's entries from `keep` on into a new leaf after it, which `sep` separates from l.
	Leaf *split_leaf(Leaf *l, int keep, const K &sep)
	{
		auto *r = new Leaf;
		std::move(l->keys + keep, l->keys + l->n, r->keys);
		std::move(l->vals + keep, l->vals + l->n, r->vals);
		r->n = l->n - keep;
		l->n = keep;
		r->next = l->next;
		r->prev = l;
		(l->next ? l->next->prev : last_) = r;
		l->next = r;
		insert_in_parent(l, sep, r);
		return r;
	}

	// Puts `right` after `left` in left's parent, separated by `sep`, splitting up the tree.
	void insert_in_parent(Node *left, const K &sep, Node *right)
	{
		Inner *p = left->parent;
		if (!p) {
			auto *root = new Inner;
			root->n = 1;
			root->keys[0] = sep;
			root->kids[0] = left;
			root->kids[1] = right;
			left->parent = right->parent = root;
			root_ = root;
			return;
		}
		int ci = child_index(p, left);
		if (p->n < kInner) {
			std::move_backward(p->keys + ci, p->keys + p->n, p->keys + p->n + 1);
			std::move_backward(p->kids + ci + 1, p->kids + p->n + 1, p->kids + p->n + 2);
			p->keys[ci] = sep;
			p->kids[ci + 1] = right;
			right->parent = p;
			++p->n;
			return;
		}
		// p is full: lay out its keys and children with the new ones, then halve them.
		K keys[kInner + 1];
		Node *kids[kInner + 2];
		std::move(p->keys, p->keys + ci, keys);
		keys[ci] = sep;
		std::move(p->keys + ci, p->keys + kInner, keys + ci + 1);
		std::copy(p->kids, p->kids + ci + 1, kids);
		kids[ci + 1] = right;
		std::copy(p->kids + ci + 1, p->kids + kInner + 1, kids + ci + 2);
		constexpr int mid = (kInner + 1) / 2; // keys left in p; keys[mid] goes up
		auto *q = new Inner;
		p->n = mid;
		std::move(keys, keys + mid, p->keys);
		std::copy(kids, kids + mid + 1, p->kids);
		q->n = kInner - mid;
		std::move(keys + mid + 1, keys + kInner + 1, q->keys);
		std::copy(kids + mid + 1, kids + kInner + 2, q->kids);
		for (int i = 0; i <= p->n; ++i)
			p->kids[i]->parent = p;
		for (int i = 0; i <= q->n; ++i)
			q->kids[i]->parent = q;
		insert_in_parent(p, keys[mid], q);
	}

	// Leaf l (not the root) has fewer than kMinLeaf entries: take some from a sibling under
	// the same parent, or merge with it.
	void rebalance(Leaf *l)
	{
		Inner *p = l->parent;
		int ci = child_index(p, l);
		Leaf *a = ci > 0 ? static_cast<Leaf *>(p->kids[ci - 1]) : l; // the left one of the pair
		Leaf *b = ci > 0 ? l : static_cast<Leaf *>(p->kids[1]);
		int sep = ci > 0 ? ci - 1 : 0; // p->keys[sep] separates a from b
		if (a->n + b->n <= kLeaf) {
			std::move(b->keys, b->keys + b->n, a->keys + a->n);
			std::move(b->vals, b->vals + b->n, a->vals + a->n);
			a->n += b->n;
			a->next = b->next;
			(b->next ? b->next->prev : last_) = a;
			delete b;
			remove_child(p, sep);
			return;
		}
		if (a->n > b->n) { // move a's last entries to b's front
			int k = (a->n - b->n) / 2;
			std::move_backward(b->keys, b->keys + b->n, b->keys + b->n + k);
			std::move_backward(b->vals, b->vals + b->n, b->vals + b->n + k);
			std::move(a->keys + a->n - k, a->keys + a->n, b->keys);
			std::move(a->vals + a->n - k, a->vals + a->n, b->vals);
			a->n -= k;
			b->n += k;
		} else { // move b's first entries to a's end
			int k = (b->n - a->n) / 2;
			std::move(b->keys, b->keys + k, a->keys + a->n);
			std::move(b->vals, b->vals + k, a->vals + a->n);
			std::move(b->keys + k, b->keys + b->n, b->keys);
			std::move(b->vals + k, b->vals + b->n, b->vals);
			a->n += k;
			b->n -= k;
		}
		p->keys[sep] = b->keys[0];
	}

	// Removes p's separator `sep` and the child after it (already merged away), then mends p.
	void remove_child(Inner *p, int sep)
	{
		std::move(p->keys + sep + 1, p->keys + p->n, p->keys + sep);
		std::move(p->kids + sep + 2, p->kids + p->n + 1, p->kids + sep + 1);
		--p->n;
		if (p == root_) {
			if (p->n == 0) { // one child left: it is the root
				root_ = p->kids[0];
				root_->parent = nullptr;
				delete p;
			}
			return;
		}
		if (p->n >= kMinInner)
			return;
		Inner *g = p->parent;
		int ci = child_index(g, p);
		Inner *a = ci > 0 ? static_cast<Inner *>(g->kids[ci - 1]) : p;
		Inner *b = ci > 0 ? p : static_cast<Inner *>(g->kids[1]);
		int gs = ci > 0 ? ci - 1 : 0; // g->keys[gs] separates a from b
		if (a->n + b->n + 1 <= kInner) {
			a->keys[a->n] = g->keys[gs];
			std::move(b->keys, b->keys + b->n, a->keys + a->n + 1);
			std::copy(b->kids, b->kids + b->n + 1, a->kids + a->n + 1);
			for (int i = 0; i <= b->n; ++i)
				b->kids[i]->parent = a;
			a->n += b->n + 1;
			delete b;
			remove_child(g, gs);
			return;
		}
		if (a->n > b->n) { // rotate a's last child to b through g
			std::move_backward(b->keys, b->keys + b->n, b->keys + b->n + 1);
			std::move_backward(b->kids, b->kids + b->n + 1, b->kids + b->n + 2);
			b->keys[0] = g->keys[gs];
			b->kids[0] = a->kids[a->n];
			b->kids[0]->parent = b;
			g->keys[gs] = a->keys[a->n - 1];
			--a->n;
			++b->n;
		} else { // rotate b's first child to a through g
			a->keys[a->n] = g->keys[gs];
			a->kids[a->n + 1] = b->kids[0];
			a->kids[a->n + 1]->parent = a;
			g->keys[gs] = b->keys[0];
			std::move(b->keys + 1, b->keys + b->n, b->keys);
			std::move(b->kids + 1, b->kids + b->n + 1, b->kids);
			++a->n;
			--b->n;
		}
	}

	static void destroy(Node *n)
	{
		if (n->leaf) {
			delete static_cast<Leaf *>(n);
			return;
		}
		auto *in = static_cast<Inner *>(n);
		for (int i = 0; i <= in->n; ++i)
			destroy(in->kids[i]);
		delete in;
	}

	// A copy of the subtree at n under `parent`, its leaves chained after `prev`.
	Node *clone(const Node *n, Inner *parent, Leaf *&prev)
	{
		if (n->leaf) {
			auto *l = new Leaf(*static_cast<const Leaf *>(n));
			l->parent = parent;
			l->prev = prev;
			l->next = nullptr;
			(prev ? prev->next : first_) = l;
			prev = l;
			return l;
		}
		const auto *src = static_cast<const Inner *>(n);
		auto *in = new Inner;
		in->parent = parent;
		in->n = src->n;
		std::copy(src->keys, src->keys + src->n, in->keys);
		for (int i = 0; i <= src->n; ++i)
			in->kids[i] = clone(src->kids[i], in, prev);
		return in;
	}

	void copy_from(const BTreeMap &o)
	{
		if (!o.root_)
			return;
		Leaf *prev = nullptr;
		root_ = clone(o.root_, nullptr, prev);
		last_ = prev;
		size_ = o.size_;
	}

	void steal(BTreeMap &o)
	{
		root_ = std::exchange(o.root_, nullptr);
		first_ = std::exchange(o.first_, nullptr);
		last_ = std::exchange(o.last_, nullptr);
		size_ = std::exchange(o.size_, 0);
	}

	// Keys of the subtree at n lie in [lo, hi) (a null bound is open).
	bool check_node(const Node *n, const K *lo, const K *hi, const Leaf *&prev, size_type &seen) const
	{
		const bool end_leaf = n == first_ || n == last_;
		if (n->leaf) {
			const auto *l = static_cast<const Leaf *>(n);
			if (l->n < 1 || l->n > kLeaf || (n != root_ && !end_leaf && l->n < kMinLeaf) ||
			    l->prev != prev || (prev && prev->next != l) || (!prev && first_ != l))
				return false;
			for (int i = 0; i < l->n; ++i)
				if ((i > 0 && !(l->keys[i - 1] < l->keys[i])) || (lo && l->keys[i] < *lo) ||
				    (hi && !(l->keys[i] < *hi)))
					return false;
			prev = l;
			seen += l->n;
			return true;
		}
		const auto *in = static_cast<const Inner *>(n);
		if (in->n < 1 || in->n > kInner || (n != root_ && in->n < kMinInner))
			return false;
		for (int i = 0; i <= in->n; ++i) {
			if (in->kids[i]->parent != in || (i > 0 && i < in->n && !(in->keys[i - 1] < in->keys[i])))
				return false;
			const K *klo = i > 0 ? &in->keys[i - 1] : lo;
			const K *khi = i < in->n ? &in->keys[i] : hi;
			if (!check_node(in->kids[i], klo, khi, prev, seen))
				return false;
		}
		return true;
	}

	Node *root_ = nullptr;
	Leaf *first_ = nullptr, *last_ = nullptr;
	size_type size_ = 0;
};

// Erases the entries `pred` holds true for; how many.
template <class K, class V, int L, int I, class Pred> std::size_t erase_if(BTreeMap<K, V, L, I> &m, Pred pred)
{
	std::size_t gone = 0;
	for (auto it = m.begin(); it != m.end();) {
		if (pred(*it)) {
			it = m.erase(it);
			++gone;
		} else {
			++it;
		}
	}
	return gone;
}

} // namespace gw
