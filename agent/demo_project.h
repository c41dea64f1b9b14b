// The demo project the scripted policy works on: the seed's calculator bug (add() subtracts), moved
// from Python to POSIX sh so the demo needs nothing beyond /bin/sh, which every machine that runs
// Bazel has. `sh test.sh` exits 0 only when add() adds.
#ifndef AGENT_DEMO_PROJECT_H_
#define AGENT_DEMO_PROJECT_H_

namespace agent {

inline constexpr char kDemoSourcePath[] = "calc.sh";
inline constexpr char kDemoTestPath[] = "test.sh";
inline constexpr char kDemoBuggyLine[] = "echo $((a - b))";
inline constexpr char kDemoFixedLine[] = "echo $((a + b))";
inline constexpr char kDemoGoal[] = "fix add() in calc.sh so that `sh test.sh` passes";

inline constexpr char kDemoSource[] =
    "# calc.sh: a tiny calculator library; source it and call add A B.\n"
    "add() {\n"
    "  a=$1\n"
    "  b=$2\n"
    "  echo $((a - b))\n"
    "}\n";

inline constexpr char kDemoTest[] =
    "# test.sh: the calculator's tests; exits 0 when they all pass.\n"
    ". ./calc.sh\n"
    "failed=0\n"
    "check() {\n"
    "  if [ \"$2\" = \"$3\" ]; then\n"
    "    echo \"ok   $1\"\n"
    "  else\n"
    "    echo \"FAIL $1: got $2, want $3\"\n"
    "    failed=1\n"
    "  fi\n"
    "}\n"
    "check 'add 2 3' \"$(add 2 3)\" 5\n"
    "check 'add -1 1' \"$(add -1 1)\" 0\n"
    "check 'add 0 0' \"$(add 0 0)\" 0\n"
    "exit $failed\n";

// What escape mode tries to read: a file next to (outside) the workspace.
inline constexpr char kDemoSecretRelative[] = "../secret.txt";

}  // namespace agent

#endif  // AGENT_DEMO_PROJECT_H_
