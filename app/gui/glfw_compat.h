// glfw_compat.h — the GLFW 3.3 calls the window makes that emscripten 3.1.6's GLFW (the browser build)
// does not have, given the page's answers; nothing on the desktop, where GLFW has them all.
#pragma once
#include <GLFW/glfw3.h>

#ifdef __EMSCRIPTEN__
#include <emscripten/html5.h>

namespace attnscope::gui {

// The screen's device pixels per CSS pixel (the canvas is in device pixels: index.html).
inline void glfwGetWindowContentScale(GLFWwindow*, float* x, float* y) {
  const float ratio = float(emscripten_get_device_pixel_ratio());
  if (x) *x = ratio;
  if (y) *y = ratio;
}
// A page has no work area to fit a window to: the page sizes the canvas.
inline void glfwGetMonitorWorkarea(GLFWmonitor*, int* x, int* y, int* w, int* h) {
  if (x) *x = 0;
  if (y) *y = 0;
  if (w) *w = 0;
  if (h) *h = 0;
}
// ImGui 1.86's GLFW backend ignores the scancode.
inline int glfwGetKeyScancode(int) { return 0; }

}  // namespace attnscope::gui
#endif
