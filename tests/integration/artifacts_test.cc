// Artifacts from real runs: matplotlib figures (on plt.show() and still open at exit, PNG or
// SVG), plotly figures (fig.show(): standalone HTML), R plots, files written to /sandbox/out,
// caps, and nothing twice or through a link.
#include <nlohmann/json.hpp>

#include "src/session/session.h"
#include "tests/integration/sandbox_fixture.h"

namespace corral::testing {
namespace {

class Artifacts : public SandboxTest {
 protected:
  std::unique_ptr<Session> open(const std::string& lang = "python", const std::string& policy_json = "{}") {
    SessionOptions o;
    o.language = lang;
    o.policy = policy(policy_json);
    o.artifacts.max_bytes_each = 1 << 20;
    auto s = Session::open(executor_, o);
    EXPECT_TRUE(s.ok()) << s.status().to_string();
    return s.ok() ? std::move(s).value() : nullptr;
  }
  static const Artifact* named(const ExecResult& r, const std::string& name) {
    for (const auto& a : r.artifacts) {
      if (a.name == name) return &a;
    }
    return nullptr;
  }
};

TEST_F(Artifacts, MatplotlibFiguresWithoutCodeChanges) {
  auto s = open();
  ASSERT_TRUE(s);
  auto r = s->run("import matplotlib.pyplot as plt\n"
                  "plt.plot([1, 2, 3], [3, 1, 2]); plt.show()\n"
                  "plt.figure(figsize=(4, 3)); plt.bar(['a', 'b'], [1, 2])\n");  // never shown
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->status(), ExecStatus::kOk) << r->stderr_data;
  ASSERT_EQ(r->artifacts.size(), 2u);
  const Artifact* first = named(*r, "plot-001.png");
  const Artifact* second = named(*r, "plot-002.png");
  ASSERT_TRUE(first && second);
  EXPECT_EQ(first->mime, "image/png");
  EXPECT_EQ(first->bytes.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_EQ(first->width, 640u);
  EXPECT_EQ(first->height, 480u);
  EXPECT_EQ(second->width, 400u);  // figsize 4x3 inches at 100 dpi
  EXPECT_EQ(second->height, 300u);
  EXPECT_EQ(first->size, first->bytes.size());
  // The next run returns only its own figures.
  auto again = s->run("print('no plots')");
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->artifacts.empty());
}

TEST_F(Artifacts, SvgOnRequest) {
  auto s = open("python", R"({"env": {"CORRAL_PLOT_FORMAT": "svg"}})");
  ASSERT_TRUE(s);
  auto r = s->run("import matplotlib.pyplot as plt\nplt.plot([0, 1]); plt.show()");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->artifacts.size(), 1u) << r->stderr_data;
  EXPECT_EQ(r->artifacts[0].mime, "image/svg+xml");
  EXPECT_NE(r->artifacts[0].bytes.find("<svg"), std::string::npos);
}

TEST_F(Artifacts, SeabornDrawsThroughMatplotlib) {
  auto s = open();
  ASSERT_TRUE(s);
  auto probe = s->execute_command("/usr/bin/python3 -c 'import seaborn'");
  if (!probe.ok() || probe->status() != ExecStatus::kOk) GTEST_SKIP() << "python3-seaborn is not installed";
  auto r = s->run("import seaborn as sns\nsns.histplot([1, 2, 2, 3, 3, 3])");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->artifacts.size(), 1u) << r->stderr_data;
  EXPECT_EQ(r->artifacts[0].mime, "image/png");
}

TEST_F(Artifacts, RPlotsThroughThePngDevice) {
  if (access("/usr/bin/Rscript", X_OK) != 0) GTEST_SKIP() << "R is not installed";
  auto s = open("r");
  ASSERT_TRUE(s);
  auto r = s->run("plot(1:10)\nhist(c(1, 2, 2, 3))");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->status(), ExecStatus::kOk) << r->stderr_data;
  ASSERT_EQ(r->artifacts.size(), 2u);
  EXPECT_EQ(r->artifacts[0].mime, "image/png");
  EXPECT_EQ(r->artifacts[0].width, 480u);
}

TEST_F(Artifacts, OutputDirectoryFilesCapsAndLinks) {
  auto s = open();
  ASSERT_TRUE(s);
  auto r = s->run("open('/sandbox/out/report.csv', 'w').write('a,b\\n1,2\\n')\n"
                  "open('/sandbox/out/big.bin', 'wb').write(b'x' * (2 << 20))\n"
                  "import os; os.symlink('/etc/passwd', '/sandbox/out/link')\n");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->status(), ExecStatus::kOk) << r->stderr_data;
  const Artifact* csv = named(*r, "report.csv");
  ASSERT_TRUE(csv);
  EXPECT_EQ(csv->bytes, "a,b\n1,2\n");
  EXPECT_EQ(csv->mime, "text/csv");
  const Artifact* big = named(*r, "big.bin");
  ASSERT_TRUE(big);
  EXPECT_TRUE(big->truncated);
  EXPECT_EQ(big->size, 2u << 20);
  EXPECT_TRUE(big->bytes.empty());
  EXPECT_EQ(named(*r, "link"), nullptr) << "a symlink is not an artifact";
  // Unchanged files are not returned again; rewritten ones are.
  auto next = s->run("open('/sandbox/out/report.csv', 'a').write('3,4\\n')");
  ASSERT_TRUE(next.ok());
  ASSERT_EQ(next->artifacts.size(), 1u);
  EXPECT_EQ(next->artifacts[0].bytes, "a,b\n1,2\n3,4\n");
}

TEST_F(Artifacts, PlotlyFiguresAsStandaloneHtml) {
  for (bool interactive : {false, true}) {
    SessionOptions o;
    o.interactive = interactive;
    o.artifacts.max_bytes_each = 32 << 20;  // plotly.js is inlined: Debian's is ~8.6 MB
    auto s = Session::open(executor_, o);
    ASSERT_TRUE(s.ok()) << s.status().to_string();
    auto probe = (*s)->execute_command("/usr/bin/python3 -c 'import plotly'");
    if (!probe.ok() || probe->status() != ExecStatus::kOk) GTEST_SKIP() << "python3-plotly is not installed";
    auto r = (*s)->run("import plotly.graph_objects as go\n"
                       "fig = go.Figure(go.Bar(x=['alpha', 'beta'], y=[3, 7]))\n"
                       "fig.update_layout(title='corral plotly figure')\n"
                       "fig.show()\n");
    ASSERT_TRUE(r.ok());
    ASSERT_EQ(r->status(), ExecStatus::kOk) << r->stderr_data;
    ASSERT_EQ(r->artifacts.size(), 1u) << interactive;
    const Artifact& a = r->artifacts[0];
    EXPECT_EQ(a.mime, "text/html");
    EXPECT_EQ(a.name.substr(a.name.size() - 5), ".html");
    EXPECT_FALSE(a.truncated);
    EXPECT_NE(a.bytes.find("<html"), std::string::npos);
    EXPECT_NE(a.bytes.find("corral plotly figure"), std::string::npos) << "the figure's data";
    EXPECT_NE(a.bytes.find("\"alpha\""), std::string::npos);
    // plotly.js inlined, not loaded from a CDN: the page works offline.
    EXPECT_EQ(a.bytes.find("src=\"https://cdn.plot.ly"), std::string::npos);
    EXPECT_GT(a.size, 1u << 20);
    // Written with write_html into the output directory: a file like any other.
    auto w = (*s)->run("fig.write_html('/sandbox/out/chart.html', include_plotlyjs=False)\n");
    ASSERT_TRUE(w.ok());
    if (!interactive) continue;  // a new process: `fig` is gone, the run fails as it should
    ASSERT_EQ(w->artifacts.size(), 1u) << w->stderr_data;
    EXPECT_EQ(w->artifacts[0].name, "chart.html");
    EXPECT_EQ(w->artifacts[0].mime, "text/html");
  }
}

TEST_F(Artifacts, JsonCarriesThemBase64) {
  auto s = open();
  ASSERT_TRUE(s);
  auto r = s->run("open('/sandbox/out/hi.txt', 'w').write('hi')");
  ASSERT_TRUE(r.ok());
  nlohmann::json j = r->to_json();
  ASSERT_EQ(j["artifacts"].size(), 1u);
  EXPECT_EQ(j["artifacts"][0]["bytes"], "aGk=");
  EXPECT_EQ(j["artifacts"][0]["mime"], "text/plain");
}

}  // namespace
}  // namespace corral::testing
