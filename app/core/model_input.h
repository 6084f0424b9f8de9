// model_input.h — moved to the engine (attnscope/pipeline/model_input.h) with the request pipeline
// (engine/src/pipeline/README.md). Kept so that code written against the old place still builds; new
// code includes the engine header.
#pragma once
#include "attnscope/pipeline/model_input.h"
