// A DRM file's GEM handle table: handle number -> Handle, ordered by number.
//
// The kernel allocates GEM handles from an IDR, lowest free number first, from 1: a file's
// handles are small dense integers. So the table is a vector indexed by handle number (no
// node, no allocation per handle), with an ordered map beside it for numbers far beyond the
// live count (a record the model cannot vouch for must not make it allocate a slot per
// number up to 2^32). Every number in `sparse_` is at or above `dense_.size()`, so iteration
// is the dense slots in order, then the map.
//
// The interface is the part of std::map the model uses: find/count/at/erase/operator[],
// iteration yielding {first, second} (bind it as `const auto &[n, h]`).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "table_entry.hpp"

namespace gw
{

template <class H> class HandleTable
{
public:
	template <bool Const> class Iter
	{
		using Table = std::conditional_t<Const, const HandleTable, HandleTable>;
		using Ref = std::conditional_t<Const, const H &, H &>;
		using SparseIt = std::conditional_t<Const, typename std::map<uint32_t, H>::const_iterator,
						    typename std::map<uint32_t, H>::iterator>;

	public:
		using Entry = TableEntry<uint32_t, Ref>;
		using Arrow = TableArrow<uint32_t, Ref>;
		Iter() = default;
		Iter(Table *t, std::size_t i, SparseIt s) : t_(t), i_(i), s_(s) { skip(); }
		template <bool C = Const, class = std::enable_if_t<C>>
		Iter(const Iter<false> &o) : t_(o.t_), i_(o.i_), s_(o.s_)
		{
		}

		Entry operator*() const
		{
			if (i_ < t_->dense_.size())
				return {static_cast<uint32_t>(i_), t_->dense_[i_]};
			return {s_->first, s_->second};
		}
		Arrow operator->() const { return {**this}; }
		Iter &operator++()
		{
			if (i_ < t_->dense_.size()) {
				++i_;
				skip();
			} else {
				++s_;
			}
			return *this;
		}
		bool operator==(const Iter &o) const { return i_ == o.i_ && s_ == o.s_; }

	private:
		friend class HandleTable;
		template <bool> friend class Iter;
		void skip()
		{
			while (i_ < t_->dense_.size() && !t_->live_[i_])
				++i_;
		}
		Table *t_ = nullptr;
		std::size_t i_ = 0; // dense slot, or dense_.size() once in the sparse part
		SparseIt s_{};
	};
	using iterator = Iter<false>;
	using const_iterator = Iter<true>;

	iterator begin() { return {this, 0, sparse_.begin()}; }
	iterator end() { return {this, dense_.size(), sparse_.end()}; }
	const_iterator begin() const { return {this, 0, sparse_.begin()}; }
	const_iterator end() const { return {this, dense_.size(), sparse_.end()}; }

	std::size_t size() const { return size_; }
	bool empty() const { return size_ == 0; }
	std::size_t count(uint32_t n) const { return find(n) != end(); }

	iterator find(uint32_t n)
	{
		if (n < dense_.size())
			return live_[n] ? iterator{this, n, sparse_.begin()} : end();
		return {this, dense_.size(), sparse_.find(n)};
	}
	const_iterator find(uint32_t n) const
	{
		if (n < dense_.size())
			return live_[n] ? const_iterator{this, n, sparse_.begin()} : end();
		return {this, dense_.size(), sparse_.find(n)};
	}
	H &at(uint32_t n)
	{
		auto it = find(n);
		if (it == end())
			throw std::out_of_range("no GEM handle " + std::to_string(n));
		return it->second;
	}
	const H &at(uint32_t n) const
	{
		auto it = find(n);
		if (it == end())
			throw std::out_of_range("no GEM handle " + std::to_string(n));
		return it->second;
	}

	// The handle numbered n, a default one if there was none.
	H &operator[](uint32_t n)
	{
		if (n >= dense_.size() && uint64_t{n} < 2 * uint64_t{size_} + kSlack)
			grow(n + std::size_t{1});
		if (n < dense_.size()) {
			if (!live_[n]) {
				live_[n] = true;
				++size_;
			}
			return dense_[n];
		}
		auto [it, inserted] = sparse_.try_emplace(n);
		size_ += inserted;
		return it->second;
	}

	void erase(iterator it)
	{
		if (it.i_ < dense_.size()) {
			dense_[it.i_] = H{};
			live_[it.i_] = false;
		} else {
			sparse_.erase(it.s_);
		}
		--size_;
	}
	std::size_t erase(uint32_t n)
	{
		auto it = find(n);
		if (it == end())
			return 0;
		erase(it);
		return 1;
	}

private:
	// A number below twice the live count plus this is stored densely: a dense table's
	// slots are at most about half empty.
	static constexpr uint64_t kSlack = 64;

	void grow(std::size_t n)
	{
		dense_.resize(n);
		live_.resize(n);
		// the invariant: every sparse number is at or above dense_.size()
		while (!sparse_.empty() && sparse_.begin()->first < n) {
			auto node = sparse_.extract(sparse_.begin());
			dense_[node.key()] = std::move(node.mapped());
			live_[node.key()] = true;
		}
	}

	std::vector<H> dense_;
	std::vector<bool> live_;
	std::map<uint32_t, H> sparse_;
	std::size_t size_ = 0;
};

} // namespace gw
