#pragma once
// The dashboard's files (actors/http/assets/ and Debian's Chart.js), compiled
// into the binary at build time by actors/http/embed_assets.cmake: the page
// needs no CDN and no network beyond this server.

#include <cstddef>
#include <string>

namespace cerebro {

struct DashboardAsset {
  const char* path;  // "/index.html", "/chart.min.js"
  const char* content_type;
  const char* data;
  size_t size;
};

// nullptr for a path that is no asset.
const DashboardAsset* find_dashboard_asset(const std::string& path);

}  // namespace cerebro
