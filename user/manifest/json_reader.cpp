#include "json_reader.hpp"

#include <set>

namespace gw::jsonin
{

namespace
{
struct TooDeep {
};
} // namespace

json parse(const std::string &text)
{
	// the parser keeps its own stack (it does not recurse); the callback stops it at the first
	// value deeper than kMaxDepth, so no deeper document is ever built
	try {
		return json::parse(text, [](int depth, json::parse_event_t, json &) {
			if (depth > kMaxDepth)
				throw TooDeep{};
			return true;
		});
	} catch (const TooDeep &) {
		throw FormatError("nests deeper than " + std::to_string(kMaxDepth) + " levels");
	} catch (const json::parse_error &e) {
		throw FormatError("not valid JSON at byte " + std::to_string(e.byte));
	} catch (const json::out_of_range &) { // 406: a number beyond a double's range (1e400)
		throw FormatError("has a number beyond the range of a double");
	}
}

const char *type_name(const json &v)
{
	if (v.is_number_integer())
		return v.get<int64_t>() < 0 && !v.is_number_unsigned() ? "a negative integer" : "an unsigned integer";
	if (v.is_number_float())
		return "a fractional number";
	switch (v.type()) {
	case json::value_t::null: return "null";
	case json::value_t::string: return "a string";
	case json::value_t::boolean: return "a boolean";
	case json::value_t::array: return "an array";
	case json::value_t::object: return "an object";
	default: return "something else";
	}
}

void fail(const std::string &path, const std::string &what)
{
	throw FormatError(path.empty() ? "the document " + what : "field " + path + " " + what);
}

void wrong(const std::string &path, const json &v, const char *expected)
{
	fail(path, std::string("is ") + type_name(v) + ", expected " + expected);
}

uint64_t to_u64(const json &v, const std::string &path, uint64_t max)
{
	if (!is_unsigned(v))
		wrong(path, v, "an unsigned integer");
	uint64_t n = v.get<uint64_t>();
	if (n > max)
		fail(path, "is " + std::to_string(n) + ", more than " + std::to_string(max));
	return n;
}

std::pair<uint64_t, uint64_t> pair_u64(const json &v, const std::string &path, uint64_t max0, uint64_t max1)
{
	if (!v.is_array() || v.size() != 2 || !is_unsigned(v[0]) || !is_unsigned(v[1]))
		fail(path, "is not a pair of unsigned integers");
	if (v[0].get<uint64_t>() > max0 || v[1].get<uint64_t>() > max1)
		fail(path, "is out of range");
	return {v[0].get<uint64_t>(), v[1].get<uint64_t>()};
}

Obj::Obj(const json &v, std::string path) : j_(v), where_(std::move(path))
{
	if (!j_.is_object())
		wrong(where_, j_, "an object");
}

const json *Obj::find(const char *key) const
{
	auto it = j_.find(key);
	return it == j_.end() ? nullptr : &*it;
}

const json *Obj::maybe(const char *key) const
{
	const json *v = find(key);
	return v && !v->is_null() ? v : nullptr;
}

const json &Obj::need(const char *key) const
{
	const json *v = find(key);
	if (!v)
		throw FormatError("missing field " + path(key));
	return *v;
}

uint64_t Obj::req_u64(const char *key, uint64_t max) const
{
	return to_u64(need(key), path(key), max);
}

uint32_t Obj::req_u32(const char *key, uint64_t max) const
{
	return static_cast<uint32_t>(req_u64(key, std::min<uint64_t>(max, UINT32_MAX)));
}

uint64_t Obj::opt_u64(const char *key, uint64_t dflt, uint64_t max) const
{
	const json *v = find(key);
	return v ? to_u64(*v, path(key), max) : dflt;
}

uint32_t Obj::opt_u32(const char *key, uint32_t dflt, uint64_t max) const
{
	return static_cast<uint32_t>(opt_u64(key, dflt, std::min<uint64_t>(max, UINT32_MAX)));
}

uint16_t Obj::opt_u16(const char *key) const
{
	return static_cast<uint16_t>(opt_u64(key, 0, UINT16_MAX));
}

std::optional<uint64_t> Obj::u64_or_null(const char *key, bool required, uint64_t max) const
{
	const json *v = required ? &need(key) : find(key);
	if (!v || v->is_null())
		return std::nullopt;
	if (!is_unsigned(*v))
		wrong(path(key), *v, "an unsigned integer or null");
	return to_u64(*v, path(key), max);
}

std::optional<uint32_t> Obj::u32_or_null(const char *key, bool required, uint64_t max) const
{
	auto v = u64_or_null(key, required, std::min<uint64_t>(max, UINT32_MAX));
	return v ? std::optional<uint32_t>(static_cast<uint32_t>(*v)) : std::nullopt;
}

std::string Obj::req_str(const char *key, std::size_t max_len) const
{
	const json &v = need(key);
	if (!v.is_string())
		wrong(path(key), v, "a string");
	if (v.get_ref<const std::string &>().size() > max_len)
		fail(key, "is longer than " + std::to_string(max_len) + " characters");
	return v.get<std::string>();
}

std::optional<std::string> Obj::opt_str(const char *key) const
{
	if (!find(key))
		return std::nullopt;
	return req_str(key);
}

bool Obj::req_bool(const char *key) const
{
	const json &v = need(key);
	if (!v.is_boolean())
		wrong(path(key), v, "a boolean");
	return v.get<bool>();
}

bool Obj::opt_bool(const char *key, bool dflt) const
{
	return find(key) ? req_bool(key) : dflt;
}

const json &Obj::req_array(const char *key) const
{
	const json &v = need(key);
	if (!v.is_array())
		wrong(path(key), v, "an array");
	return v;
}

const json *Obj::opt_array(const char *key) const
{
	return find(key) ? &req_array(key) : nullptr;
}

Obj Obj::req_object(const char *key) const
{
	return Obj(need(key), path(key));
}

std::optional<Obj> Obj::opt_object_at(const char *key) const
{
	const json *v = maybe(key);
	if (!v)
		return std::nullopt;
	return Obj(*v, path(key));
}

const json &Obj::opt_object(const char *key) const
{
	static const json empty = json::object();
	const json *v = maybe(key);
	if (!v)
		return empty;
	if (!v->is_object())
		wrong(path(key), *v, "an object");
	return *v;
}

std::vector<std::string> Obj::req_strings(const char *key) const
{
	std::vector<std::string> out;
	const json &a = req_array(key);
	for (std::size_t i = 0; i < a.size(); ++i) {
		if (!a[i].is_string())
			wrong(at(key, i), a[i], "a string");
		out.push_back(a[i].get<std::string>());
	}
	return out;
}

std::vector<uint8_t> Obj::req_hex(const char *key, std::size_t max_bytes) const
{
	const std::string &hx = req_str(key, 2 * max_bytes);
	if (hx.size() % 2 || hx.find_first_not_of("0123456789abcdef") != std::string::npos)
		fail(key, "is not lowercase hex");
	std::vector<uint8_t> out;
	out.reserve(hx.size() / 2);
	auto nib = [](char c) { return static_cast<uint8_t>(c <= '9' ? c - '0' : c - 'a' + 10); };
	for (std::size_t x = 0; x < hx.size(); x += 2)
		out.push_back(static_cast<uint8_t>(nib(hx[x]) << 4 | nib(hx[x + 1])));
	return out;
}

std::string to_hex(const std::vector<uint8_t> &bytes)
{
	static const char digits[] = "0123456789abcdef";
	std::string s;
	s.reserve(2 * bytes.size());
	for (uint8_t c : bytes) {
		s += digits[c >> 4];
		s += digits[c & 15];
	}
	return s;
}

void Obj::only(std::initializer_list<const char *> keys) const
{
	std::set<std::string> known(keys.begin(), keys.end());
	for (auto it = j_.begin(); it != j_.end(); ++it)
		if (!known.count(it.key()))
			jsonin::fail(where_.empty() ? it.key() : where_ + "." + it.key(), "is unknown");
}

} // namespace gw::jsonin
