// key_queue.h — every key press reaches exactly one frame, however fast it was released.
//
// Dear ImGui 1.86 reads the keyboard as io.KeysDown at the start of a frame. A press and its release
// that arrive between two frames (xdotool's `key ctrl+z`, a presenter's clicker, a remote desktop, a
// slow frame, the browser's event loop) leave KeysDown false at NewFrame: the press is never seen. So
// the window's GLFW key callback does not touch ImGui's state: it queues the event, and
// FeedQueuedKeys, called once a frame before ImGui::NewFrame, hands the queue to the backend's own
// callback in order, stopping before the release of a key pressed in this same feed. That release (and
// everything after it, so the order is kept) waits for the next frame, which is requested at once.
// Shape: a FIFO of (key, scancode, action, mods); at most one press-release pair of one key per frame.
#pragma once

struct GLFWwindow;

namespace attnscope::gui {

// Replaces the key callback that ImGui_ImplGlfw_InitForOpenGL(window, true) installed with the queue.
void InstallKeyQueue(GLFWwindow* window);

// Hands the queued key events of this frame to ImGui's GLFW backend; when events are left for the
// next frame, posts an empty event so that the next frame comes without waiting for input.
void FeedQueuedKeys(GLFWwindow* window);

}  // namespace attnscope::gui
