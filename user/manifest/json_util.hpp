// Internal to user/manifest/: what the reader and the views both need.
#pragma once

#include <nlohmann/json.hpp>

namespace gw::manifest::detail
{

// a JSON number that is a non-negative integer
inline bool is_unsigned(const nlohmann::json &v)
{
	return v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0);
}

} // namespace gw::manifest::detail
