// The one strict JSON reader for every file gpuwatch reads back: the manifest (manifest.cpp),
// the CRIU plugin's images (restore/plugin/images.cpp) and the i915 conversion record
// (restore/remote/i915_record.cpp). Each of them is untrusted input to root. An Obj is a JSON
// object being read at a path ("" for the top, "handles[2]" for an element); every accessor
// checks the kind and the bounds of the field it returns, and every error is one FormatError
// line naming the field's path:
//
//   missing field handles[0].size
//   field handles[0].size is a string, expected an unsigned integer
//   field handles[1].handle is 4000000000, more than 65536
//   not valid JSON at byte 35
//
// The caller catches FormatError once and prefixes the file's name (ManifestError, ImageError).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace gw::jsonin
{

using json = nlohmann::json;

struct FormatError : std::runtime_error {
	using std::runtime_error::runtime_error;
};

// Nothing gpuwatch reads nests deeper than a few levels: a deeper document is refused as it is
// parsed, before anything copies or compares it (both recurse once per level).
constexpr int kMaxDepth = 64;

// The text as JSON; throws FormatError: "not valid JSON at byte N", "nests deeper than 64
// levels", "has a number beyond the range of a double".
json parse(const std::string &text);

// a JSON number that is a non-negative integer
inline bool is_unsigned(const json &v)
{
	return v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0);
}
// "a string", "a negative integer", "a fractional number", ...
const char *type_name(const json &v);
// "field PATH WHAT"
[[noreturn]] void fail(const std::string &path, const std::string &what);
// "field PATH is <type of v>, expected EXPECTED"
[[noreturn]] void wrong(const std::string &path, const json &v, const char *expected);
// v as an unsigned integer of at most `max` ("field PATH is N, more than MAX")
uint64_t to_u64(const json &v, const std::string &path, uint64_t max = UINT64_MAX);

class Obj
{
public:
	Obj(const json &v, std::string path);

	const json &value() const { return j_; }
	const std::string &where() const { return where_; }
	std::string path(const char *key) const { return where_.empty() ? std::string(key) : where_ + "." + key; }
	std::string at(const char *key, std::size_t i) const { return path(key) + "[" + std::to_string(i) + "]"; }
	[[noreturn]] void fail(const char *key, const std::string &what) const { jsonin::fail(path(key), what); }

	const json *find(const char *key) const;  // absent: nullptr
	const json *maybe(const char *key) const; // absent or null: nullptr
	const json &need(const char *key) const;  // absent: "missing field ..."

	// Unsigned integers. req_: the field must be there; opt_: absent reads as `dflt`;
	// u64_or_null: null (and absence, unless `required`) read as nullopt.
	uint64_t req_u64(const char *key, uint64_t max = UINT64_MAX) const;
	uint32_t req_u32(const char *key, uint64_t max = UINT32_MAX) const;
	uint64_t opt_u64(const char *key, uint64_t dflt, uint64_t max = UINT64_MAX) const;
	uint32_t opt_u32(const char *key, uint32_t dflt, uint64_t max = UINT32_MAX) const;
	uint16_t opt_u16(const char *key) const;
	std::optional<uint64_t> u64_or_null(const char *key, bool required, uint64_t max = UINT64_MAX) const;
	std::optional<uint32_t> u32_or_null(const char *key, bool required, uint64_t max = UINT32_MAX) const;

	std::string req_str(const char *key, std::size_t max_len = SIZE_MAX) const;
	std::optional<std::string> opt_str(const char *key) const;
	bool req_bool(const char *key) const;
	bool opt_bool(const char *key, bool dflt) const;
	const json &req_array(const char *key) const;
	const json *opt_array(const char *key) const; // absent: nullptr
	Obj req_object(const char *key) const;
	std::optional<Obj> opt_object_at(const char *key) const; // absent or null: nullopt
	const json &opt_object(const char *key) const;           // absent or null: {}
	std::vector<std::string> req_strings(const char *key) const;
	// bytes written as lowercase hex (to_hex), at most max_bytes of them
	std::vector<uint8_t> req_hex(const char *key, std::size_t max_bytes) const;

	// every key of the object is one of `keys` ("field PATH is unknown" otherwise)
	void only(std::initializer_list<const char *> keys) const;

	// each element of array `list` (the value of field `key`) as an Obj
	template <typename F> void each(const json &list, const char *key, F &&f) const
	{
		for (std::size_t i = 0; i < list.size(); ++i)
			f(Obj(list[i], at(key, i)));
	}

private:
	const json &j_;
	std::string where_;
};

// bytes as lowercase hex, two digits each (Obj::req_hex reads them)
std::string to_hex(const std::vector<uint8_t> &bytes);

// A [a, b] pair of unsigned integers of at most max0 and max1.
std::pair<uint64_t, uint64_t> pair_u64(const json &v, const std::string &path, uint64_t max0 = UINT64_MAX,
				       uint64_t max1 = UINT64_MAX);

} // namespace gw::jsonin
