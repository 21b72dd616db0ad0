// The model's GEM objects: id -> object, in slots (no node, no hash per object).
//
// A model of 10^5 handles holds about 10^5 objects; a hash map spent a node (a malloc chunk)
// and a bucket on each. Here an object is one slot of a chunked array (std::deque: no copy
// and no doubling slack as it grows), found by index. A freed slot is reused, and so that an
// id never names two objects (a framebuffer plane keeps the id of an object whose handle was
// closed, and must not come to name the next object made), each slot has a generation, bumped
// when it is freed, in the id's upper 32 bits:
//
//     id = generation << 32 | (slot + 1)
//
// The first object of each slot has generation 0, so a model that never freed one numbers its
// objects 1, 2, 3, ... as before. Ids are never 0 (0 means "no object" in the model).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "table_entry.hpp"

namespace gw
{

template <class T> class ObjectTable
{
public:
	template <bool Const> class Iter
	{
		using Table = std::conditional_t<Const, const ObjectTable, ObjectTable>;
		using Ref = std::conditional_t<Const, const T &, T &>;

	public:
		using Entry = TableEntry<uint64_t, Ref>;
		using Arrow = TableArrow<uint64_t, Ref>;
		Iter(Table *t, std::size_t i) : t_(t), i_(i) { skip(); }
		Entry operator*() const { return {t_->id_of(i_), t_->slots_[i_]}; }
		Arrow operator->() const { return {**this}; }
		Iter &operator++()
		{
			++i_;
			skip();
			return *this;
		}
		bool operator==(const Iter &o) const { return i_ == o.i_; }

	private:
		void skip()
		{
			while (i_ < t_->slots_.size() && !(t_->gen_[i_] & kLive))
				++i_;
		}
		Table *t_;
		std::size_t i_;
	};

	Iter<false> begin() { return {this, 0}; }
	Iter<false> end() { return {this, slots_.size()}; }
	Iter<true> begin() const { return {this, 0}; }
	Iter<true> end() const { return {this, slots_.size()}; }

	std::size_t size() const { return size_; }
	bool empty() const { return size_ == 0; }

	// A new object; returns its id.
	uint64_t insert(T v)
	{
		std::size_t i;
		if (!free_.empty()) {
			i = free_.back();
			free_.pop_back();
			slots_[i] = std::move(v);
		} else {
			i = slots_.size();
			if (i >= kMaxSlots)
				throw std::length_error("GEM object table full");
			slots_.push_back(std::move(v));
			gen_.push_back(0);
		}
		gen_[i] |= kLive;
		++size_;
		return id_of(i);
	}

	T *find(uint64_t id) { return live(id) ? &slots_[slot_of(id)] : nullptr; }
	const T *find(uint64_t id) const { return live(id) ? &slots_[slot_of(id)] : nullptr; }
	std::size_t count(uint64_t id) const { return live(id); }
	const T &at(uint64_t id) const
	{
		if (!live(id))
			throw std::out_of_range("no GEM object " + std::to_string(id));
		return slots_[slot_of(id)];
	}

	// Frees the object `id` names (no-op when none): its slot comes back with the next
	// generation, which a later id carries.
	void erase(uint64_t id)
	{
		if (!live(id))
			return;
		std::size_t i = slot_of(id);
		slots_[i] = T{};
		gen_[i] = ((gen_[i] & ~kLive) + 1) & ~kLive; // wraps after 2^31 reuses of one slot
		free_.push_back(static_cast<uint32_t>(i));
		--size_;
	}
	template <class Pred> void erase_if(Pred pred) // pred(id, const T &)
	{
		for (std::size_t i = 0; i < slots_.size(); ++i)
			if ((gen_[i] & kLive) && pred(id_of(i), std::as_const(slots_[i])))
				erase(id_of(i));
	}

private:
	static constexpr uint32_t kLive = 0x80000000u; // in gen_: the slot holds an object
	static constexpr std::size_t kMaxSlots = 0xffffffffu;

	uint64_t id_of(std::size_t i) const { return uint64_t{gen_[i] & ~kLive} << 32 | (i + 1); }
	static std::size_t slot_of(uint64_t id) { return static_cast<uint32_t>(id) - std::size_t{1}; }
	bool live(uint64_t id) const
	{
		uint32_t low = static_cast<uint32_t>(id);
		return low != 0 && low <= slots_.size() && gen_[low - 1] == ((id >> 32) | kLive) && (id >> 32) < kLive;
	}

	std::deque<T> slots_;
	std::deque<uint32_t> gen_; // generation, and kLive when the slot holds an object
	std::vector<uint32_t> free_;
	std::size_t size_ = 0;
};

} // namespace gw
