// scene_link.h — a scene inside a link: https://…/attnscope/?scene=TEXT opens exactly that scene.
//
// TEXT is the scene's JSON as Save scene writes it (scene_json.h, compact), compressed with zlib's
// format (stb's deflate, the one PNG writing uses: no new library) and written in base64url without
// padding (RFC 4648 §5: A–Z a–z 0–9 - _), so that it needs no escaping in a URL. A lesson's scene is
// about 1.4 KB of JSON and 1,000 characters of link. Reading checks everything a pasted or truncated link
// can get wrong and says which: a character outside base64url, a length no base64 has, data that is
// not zlib's, a checksum that does not match (a link cut short or mistyped), more than a scene's worth of
// text, JSON that does not parse, a scene value out of range.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "attnscope/scene/scene.h"

namespace attnscope {

// The longest TEXT read (characters) and the most JSON it may unpack to (bytes): a link is a scene,
// never a way to make the page allocate gigabytes.
inline constexpr size_t max_scene_link_chars = 64 * 1024;
inline constexpr size_t max_scene_link_json = 1024 * 1024;

// The ?scene= value of `scene`.
std::string scene_link_text(const Scene& scene);
// The two halves of the coding, for any text: compressed and in base64url, and back (InputError saying
// what is wrong with `text`).
std::string pack_link_text(const std::string& json);
std::string unpack_link_text(std::string_view text);

// The scene a ?scene= value holds. Throws InputError saying what is wrong with the text. `warnings`
// receives the keys the scene's JSON had that this version ignores (as for a scene file).
Scene scene_from_link_text(std::string_view text, std::vector<std::string>* warnings = nullptr);

// The value of the `scene` parameter when `link` is a whole link (…?scene=TEXT or …&scene=TEXT, up to
// the next & or #); otherwise `link` itself, as given (a bare TEXT).
std::string_view scene_text_of_link(std::string_view link);

// `site` (the address of attnscope's page, e.g. https://example.org/attnscope/) with ?scene=TEXT, or
// &scene=TEXT when `site` already has a query. Any #fragment of `site` is dropped.
std::string scene_link(std::string_view site, const Scene& scene);

}  // namespace attnscope
