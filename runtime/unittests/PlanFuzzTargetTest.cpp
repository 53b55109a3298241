//===- PlanFuzzTargetTest.cpp - Replays the plan fuzz corpora -------------===//
//
// Runs the fuzz target's body (fuzz/PlanFuzzTarget.h) over every file of the
// seed corpus (plans the compiler exports: each must be accepted) and of the
// regression corpus (every input that ever failed, issue 13's rows among
// them: each must be rejected with an error, and no invariant may break).
// No libFuzzer needed; a newly found crash goes into plan-regressions/.
//
//===----------------------------------------------------------------------===//

#include "PlanFuzzTarget.h"

#include <gtest/gtest.h>

#include <dirent.h>

#include <algorithm>
#include <fstream>
#include <sstream>

using namespace tandem::runtime;

namespace {

std::vector<std::string> filesIn(const std::string &dir) {
  std::vector<std::string> files;
  if (DIR *d = opendir(dir.c_str())) {
    while (dirent *e = readdir(d))
      if (e->d_name[0] != '.')
        files.push_back(dir + "/" + e->d_name);
    closedir(d);
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string contents(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void replay(const std::string &dir, bool expectAccepted) {
  std::vector<std::string> files = filesIn(dir);
  ASSERT_FALSE(files.empty()) << "no corpus files in " << dir;
  for (const std::string &file : files) {
    std::string data = contents(file);
    bool accepted = false;
    EXPECT_EQ(runPlanFuzzInput(reinterpret_cast<const uint8_t *>(data.data()),
                               data.size(), &accepted),
              "")
        << file;
    EXPECT_EQ(accepted, expectAccepted) << file;
  }
}

TEST(PlanFuzzTargetTest, SeedCorpusIsAccepted) {
  replay(TANDEM_PLAN_CORPUS_DIR "/plan-seeds", true);
}

TEST(PlanFuzzTargetTest, RegressionCorpusIsRejected) {
  replay(TANDEM_PLAN_CORPUS_DIR "/plan-regressions", false);
}

} // namespace
