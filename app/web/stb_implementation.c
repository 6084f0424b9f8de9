// The stb implementations the browser build links (on the desktop Debian's libstb holds them): image
// reading (2-D grids from PNG files), PNG writing (exports) and TrueType (export labels).
#define STB_IMAGE_IMPLEMENTATION
#include <stb_image.h>
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb_image_write.h>
#define STB_TRUETYPE_IMPLEMENTATION
#include <stb_truetype.h>
