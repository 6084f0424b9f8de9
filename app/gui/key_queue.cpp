#include "gui/key_queue.h"

#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>

#include <bitset>
#include <deque>

namespace attnscope::gui {
namespace {

struct KeyEvent {
  int key, scancode, action, mods;
};

// The GLFW callbacks run on the main thread inside glfwPollEvents/glfwWaitEvents*, as the frame loop
// does: no lock is needed.
std::deque<KeyEvent> queued;
constexpr size_t max_queued = 512;  // a stalled frame loop drops the oldest keys, never grows without end

void QueueKey(GLFWwindow*, int key, int scancode, int action, int mods) {
  if (queued.size() >= max_queued) queued.pop_front();
  queued.push_back({key, scancode, action, mods});
}

}  // namespace

void InstallKeyQueue(GLFWwindow* window) { glfwSetKeyCallback(window, QueueKey); }

void FeedQueuedKeys(GLFWwindow* window) {
  std::bitset<GLFW_KEY_LAST + 1> pressed;  // keys pressed in this feed
  while (!queued.empty()) {
    const KeyEvent e = queued.front();
    const bool known = e.key >= 0 && e.key <= GLFW_KEY_LAST;
    if (known && e.action == GLFW_RELEASE && pressed[size_t(e.key)]) break;  // its press gets this frame
    if (known && e.action == GLFW_PRESS) pressed.set(size_t(e.key));
    queued.pop_front();
    ImGui_ImplGlfw_KeyCallback(window, e.key, e.scancode, e.action, e.mods);
  }
  if (!queued.empty()) glfwPostEmptyEvent();  // the rest is the next frame's, without waiting for input
}

}  // namespace attnscope::gui
