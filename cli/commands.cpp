#include "cli/commands.hpp"

#include <boost/json.hpp>

#include <cstdlib>
#include <iostream>

#include "cli/run_watch.hpp"
#include "cli/yaml_json.hpp"
#include "common/error_codes.hpp"
#include "protocol/offline_bundle.hpp"

namespace takosumi::cli {
namespace {

namespace json = boost::json;

// Every option a subcommand binds, kept alive for the handlers by a shared_ptr.
struct Options {
  std::string name, id, file, workspace, agent, out, pool;
  std::string git_url, ref, module_path;  // capsule update
  std::int64_t valid_for = 0;
  bool accept_data_loss = false;
  bool no_wait = false;
  bool follow = false;
  int limit = 20;
};

Exit failed(const ApiError& e) {
  print_error(e.error);
  return e.exit();
}

Exit failed(const Error& e) {
  print_error(e);
  return Exit::failure;
}

std::string path_id(const std::string& id) {
  // Ids are API-made ([a-z]+_[0-9a-f]+); anything else would change the path.
  if (id.empty()) throw CLI::ValidationError("id", "an id must not be empty");
  for (char c : id)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'))
      throw CLI::ValidationError("id", "\"" + id + "\" is not an id");
  return id;
}

// --workspace, else TAKOSUMI_WORKSPACE, else the only Workspace there is. (Read here, not bound
// with CLI11's envname: that applies the variable to every subcommand's shared field.)
std::expected<std::string, Exit> workspace_of(const Context& c, const std::string& given) {
  if (!given.empty()) return path_id(given);
  if (const char* env = std::getenv("TAKOSUMI_WORKSPACE"); env && *env) return path_id(env);
  auto list = c.api.get("/api/v1/workspaces");
  if (!list) return std::unexpected(failed(list.error()));
  const auto& all = list->as_object().at("workspaces").as_array();
  if (all.size() == 1) return field(all[0].as_object(), "id");
  print_error(Error{std::string(errc::kInvalidArgument),
                    std::to_string(all.size()) +
                        " Workspaces are visible: name one with --workspace (or "
                        "TAKOSUMI_WORKSPACE)"});
  return std::unexpected(Exit::failure);
}

// Prints a GET's answer: as JSON, or as a table of rows from one array field.
Exit show_list(const Context& c, const std::string& target, const std::string& array,
               const std::vector<std::string>& headers,
               const std::function<std::vector<std::string>(const json::object&)>& row) {
  auto r = c.api.get(target);
  if (!r) return failed(r.error());
  if (c.out.json()) {
    c.out.print_json(*r);
    return Exit::ok;
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& v : r->as_object().at(array).as_array()) rows.push_back(row(v.as_object()));
  c.out.table(headers, rows);
  return Exit::ok;
}

Exit show_object(const Context& c, const std::expected<json::value, ApiError>& r,
                 const std::vector<std::string>& keys) {
  if (!r) return failed(r.error());
  if (c.out.json()) {
    c.out.print_json(*r);
    return Exit::ok;
  }
  const auto& o = r->as_object();
  for (const auto& k : keys)
    if (o.contains(k)) std::cout << k << ": " << text_of(o.at(k)) << "\n";
  return Exit::ok;
}

// A Run just created: followed to its end unless --no-wait.
Exit run_created(const Context& c, const std::expected<json::value, ApiError>& created,
                 const Options& o) {
  if (!created) return failed(created.error());
  const std::string id = field(created->as_object(), "id");
  if (o.no_wait) {
    if (c.out.json()) c.out.print_json(*created);
    else std::cout << field(created->as_object(), "type") << " " << id << " queued\n";
    return Exit::ok;
  }
  auto run = watch_run(c.api, id, c.out, o.follow);
  if (!run) return failed(run.error());
  if (c.out.json()) c.out.print_json(*run);
  return report_run(c.api, *run, c.out);
}

std::vector<std::string> run_row(const json::object& r) {
  std::string failure = "-";
  if (const auto* f = r.if_contains("failure"); f && f->is_object())
    failure = field(f->as_object(), "code");
  return {field(r, "id"), field(r, "type"), field(r, "status"), field(r, "attempt"),
          field(r, "hasChanges"), failure, time_text(r.at("createdAt"))};
}

void add_workspace(CLI::App& app, std::shared_ptr<Options> o, std::optional<Handler>& chosen) {
  auto* ws = app.add_subcommand("workspace", "Workspaces: list, create")->require_subcommand(1);
  ws->add_subcommand("list", "list the Workspaces this token sees")->callback([&chosen] {
    chosen = [](const Context& c) {
      return show_list(c, "/api/v1/workspaces", "workspaces", {"ID", "NAME", "CREATED"},
                       [](const json::object& w) {
                         return std::vector{field(w, "id"), field(w, "name"), time_text(w.at("createdAt"))};
                       });
    };
  });
  auto* create = ws->add_subcommand("create", "create a Workspace (admin token)");
  create->add_option("name", o->name, "its name")->required();
  create->callback([&chosen, o] {
    chosen = [o](const Context& c) {
      return show_object(c, c.api.post("/api/v1/workspaces", json::object{{"name", o->name}}),
                         {"id", "name"});
    };
  });
}

void add_capsule(CLI::App& app, std::shared_ptr<Options> o, std::optional<Handler>& chosen) {
  auto* cap = app.add_subcommand("capsule", "Capsules: create, list, show, update")->require_subcommand(1);
  auto* create = cap->add_subcommand("create", "create a Capsule from a YAML or JSON file");
  create->add_option("-f,--file", o->file, "the Capsule (the API's request body; - for stdin)")
      ->required();
  create->add_option("--workspace", o->workspace, "its Workspace");
  create->callback([&chosen, o] {
    chosen = [o](const Context& c) -> Exit {
      auto body = read_yaml_as_json(o->file);
      if (!body) return failed(body.error());
      if (!body->is_object()) return failed(Error{std::string(errc::kInvalidArgument), o->file + ": must be a mapping"});
      auto ws = workspace_of(c, o->workspace);
      if (!ws) return ws.error();
      return show_object(c, c.api.post("/api/v1/workspaces/" + *ws + "/capsules", *body),
                         {"id", "name", "workspaceId"});
    };
  });
  auto* list = cap->add_subcommand("list", "list the Capsules of a Workspace");
  list->add_option("--workspace", o->workspace, "the Workspace");
  list->callback([&chosen, o] {
    chosen = [o](const Context& c) -> Exit {
      auto ws = workspace_of(c, o->workspace);
      if (!ws) return ws.error();
      return show_list(c, "/api/v1/workspaces/" + *ws + "/capsules", "capsules",
                       {"ID", "NAME", "NEEDS ATTENTION"}, [](const json::object& k) {
                         return std::vector{field(k, "id"), field(k, "name"),
                                            field(k, "needsAttention")};
                       });
    };
  });
  auto* update = cap->add_subcommand(
      "update", "change a Capsule's name, source, variables or outputAllowlist (a new spec revision; "
                "queued and running Runs keep theirs)");
  update->add_option("capsule", o->id, "its id")->required();
  update->add_option("-f,--file", o->file,
                     "the change (the API's PATCH body: name, source, variables, outputAllowlist; - for stdin)");
  update->add_option("--name", o->name, "its new name");
  update->add_option("--git-url", o->git_url, "its source's new repository");
  update->add_option("--ref", o->ref, "its source's new branch, tag or commit");
  update->add_option("--module-path", o->module_path, "its source's new module directory");
  update->callback([&chosen, o] {
    chosen = [o](const Context& c) -> Exit {
      json::object body;
      if (!o->file.empty()) {
        auto read = read_yaml_as_json(o->file);
        if (!read) return failed(read.error());
        if (!read->is_object()) return failed(Error{std::string(errc::kInvalidArgument), o->file + ": must be a mapping"});
        body = std::move(read->as_object());
      }
      if (!o->name.empty()) body["name"] = o->name;
      json::object source;
      if (const auto* given = body.if_contains("source"); given && given->is_object()) source = given->as_object();
      if (!o->git_url.empty()) source["gitUrl"] = o->git_url;
      if (!o->ref.empty()) source["ref"] = o->ref;
      if (!o->module_path.empty()) source["modulePath"] = o->module_path;
      if (!source.empty()) body["source"] = std::move(source);
      return show_object(c, c.api.patch("/api/v1/capsules/" + path_id(o->id), body),
                         {"id", "name", "specRevision", "source"});
    };
  });
  auto* show = cap->add_subcommand("show", "show one Capsule");
  show->add_option("capsule", o->id, "its id")->required();
  show->callback([&chosen, o] {
    chosen = [o](const Context& c) {
      auto r = c.api.get("/api/v1/capsules/" + path_id(o->id));
      return show_object(c, r, {"id", "name", "workspaceId", "source", "specRevision", "needsAttention",
                                "attention", "variables", "outputAllowlist", "connections"});
    };
  });
}

void add_runs(CLI::App& app, std::shared_ptr<Options> o, std::optional<Handler>& chosen) {
  auto waiting = [o](CLI::App* sub) {
    sub->add_flag("--no-wait", o->no_wait, "return once the Run is queued");
    sub->add_flag("--follow", o->follow, "stream the Run's log while waiting");
  };
  auto* plan = app.add_subcommand("plan", "plan a Capsule and wait for the plan (exit 2: changes)");
  plan->add_option("capsule", o->id, "the Capsule's id")->required();
  waiting(plan);
  plan->callback([&chosen, o] {
    chosen = [o](const Context& c) {
      return run_created(c, c.api.post("/api/v1/capsules/" + path_id(o->id) + "/plan", json::object{}), *o);
    };
  });
  auto* apply = app.add_subcommand("apply", "apply a succeeded plan Run and wait for it");
  apply->add_option("run", o->id, "the plan Run's id")->required();
  apply->add_flag("--accept-data-loss", o->accept_data_loss,
                  "apply although the plan deletes or replaces data-bearing resources");
  waiting(apply);
  apply->callback([&chosen, o] {
    chosen = [o](const Context& c) {
      json::object body;
      if (o->accept_data_loss) body["acceptDataLoss"] = true;
      return run_created(c, c.api.post("/api/v1/runs/" + path_id(o->id) + "/apply", body), *o);
    };
  });
  auto* cancel = app.add_subcommand("cancel", "cancel a queued or running Run");
  cancel->add_option("run", o->id, "the Run's id")->required();
  cancel->callback([&chosen, o] {
    chosen = [o](const Context& c) {
      return show_object(c, c.api.post("/api/v1/runs/" + path_id(o->id) + "/cancel", json::object{}),
                         {"id", "status", "cancelRequested"});
    };
  });
  auto* one = app.add_subcommand("run", "one Run: its details, its plan view")->require_subcommand(1);
  auto* show = one->add_subcommand("show", "show a Run and, for a plan or an apply, the plan as tofu prints it");
  show->add_option("run", o->id, "the Run's id")->required();
  show->callback([&chosen, o] {
    chosen = [o](const Context& c) -> Exit {
      const std::string id = path_id(o->id);
      auto r = c.api.get("/api/v1/runs/" + id);
      if (!r) return failed(r.error());
      if (c.out.json()) {
        c.out.print_json(*r);
        return Exit::ok;
      }
      const auto& run = r->as_object();
      for (const char* k : {"id", "type", "status", "capsuleId", "specRevision", "sourceCommit",
                            "plannedBy", "planDigest", "stateVersionId", "agentId"})
        if (run.contains(k) && !run.at(k).is_null())
          std::cout << k << ": " << printable(text_of(run.at(k))) << "\n";
      for (const char* k : {"createdAt", "startedAt", "finishedAt"})
        if (run.contains(k)) std::cout << k << ": " << time_text(run.at(k)) << "\n";
      if (const auto* f = run.if_contains("failure"); f && f->is_object())
        std::cout << "failure: " << c.out.red(field(f->as_object(), "code")) << ": "
                  << printable(field(f->as_object(), "message")) << "\n";
      const std::string type = field(run, "type");
      if (type == "drift_check" || !(field(run, "hasChanges") == "true" || type == "apply"))
        return Exit::ok;
      std::cout << "\n";
      // Not there yet (409) or never (404, the server says why): the details above stand.
      if (auto printed = print_plan_view(c.api, id, c.out); !printed)
        print_error(printed.error().error);
      return Exit::ok;
    };
  });
  auto* view = one->add_subcommand("plan", "print a plan Run's (or an apply's) plan view; -o json as the API answers");
  view->add_option("run", o->id, "the Run's id")->required();
  view->callback([&chosen, o] {
    chosen = [o](const Context& c) -> Exit {
      const std::string id = path_id(o->id);
      if (c.out.json()) {
        auto r = c.api.get("/api/v1/runs/" + id + "/plan");
        if (!r) return failed(r.error());
        c.out.print_json(*r);
        return Exit::ok;
      }
      if (auto printed = print_plan_view(c.api, id, c.out); !printed) return failed(printed.error());
      return Exit::ok;
    };
  });
  auto* runs = app.add_subcommand("runs", "list a Capsule's Runs, newest first");
  runs->add_option("capsule", o->id, "the Capsule's id")->required();
  runs->add_option("--limit", o->limit, "how many")->check(CLI::Range(1, 100));
  runs->callback([&chosen, o] {
    chosen = [o](const Context& c) {
      return show_list(c, "/api/v1/capsules/" + path_id(o->id) + "/runs?limit=" + std::to_string(o->limit),
                       "runs", {"ID", "TYPE", "STATUS", "ATTEMPT", "CHANGES", "FAILURE", "CREATED"},
                       run_row);
    };
  });
  auto* logs = app.add_subcommand("logs", "print a Run's log");
  logs->add_option("run", o->id, "the Run's id")->required();
  logs->add_flag("--follow", o->follow, "keep printing until the Run ends");
  logs->callback([&chosen, o] {
    chosen = [o](const Context& c) -> Exit {
      const std::string id = path_id(o->id);
      if (c.out.json() && !o->follow) {
        auto r = c.api.get("/api/v1/runs/" + id + "/logs");
        if (!r) return failed(r.error());
        c.out.print_json(*r);
        return Exit::ok;
      }
      if (!o->follow) {
        auto printed = print_new_log(c.api, id, {}, std::cout);
        return printed ? Exit::ok : failed(printed.error());
      }
      auto run = watch_run(c.api, id, c.out, true);
      if (!run) return failed(run.error());
      if (c.out.json()) c.out.print_json(*run);
      return report_run(c.api, *run, c.out);
    };
  });
  auto* rollback = app.add_subcommand("rollback", "plan a return to an earlier StateVersion");
  rollback->add_option("state-version", o->id, "the StateVersion's id")->required();
  waiting(rollback);
  rollback->callback([&chosen, o] {
    chosen = [o](const Context& c) {
      return run_created(c, c.api.post("/api/v1/state-versions/" + path_id(o->id) + "/rollback-plan", json::object{}), *o);
    };
  });
  auto* drift = app.add_subcommand("drift", "check a Capsule for drift (read-only; exit 2: drift)");
  drift->add_option("capsule", o->id, "the Capsule's id")->required();
  waiting(drift);
  drift->callback([&chosen, o] {
    chosen = [o](const Context& c) {
      return run_created(c, c.api.post("/api/v1/capsules/" + path_id(o->id) + "/drift-check", json::object{}), *o);
    };
  });
}

void add_state(CLI::App& app, std::shared_ptr<Options> o, std::optional<Handler>& chosen) {
  auto* svs = app.add_subcommand("state-versions", "list a Capsule's StateVersions, newest first");
  svs->add_option("capsule", o->id, "the Capsule's id")->required();
  svs->callback([&chosen, o] {
    chosen = [o](const Context& c) {
      return show_list(c, "/api/v1/capsules/" + path_id(o->id) + "/state-versions", "stateVersions",
                       {"ID", "GENERATION", "RUN", "COMMIT", "PARTIAL", "CREATED"},
                       [](const json::object& s) {
                         return std::vector{field(s, "id"), field(s, "generation"),
                                            field(s, "createdByRunId"),
                                            field(s, "sourceCommit").substr(0, 12),
                                            field(s, "partial"), time_text(s.at("createdAt"))};
                       });
    };
  });
  auto* outputs = app.add_subcommand("outputs", "a Capsule's published (non-sensitive) Outputs");
  outputs->add_option("capsule", o->id, "the Capsule's id")->required();
  outputs->callback([&chosen, o] {
    chosen = [o](const Context& c) -> Exit {
      auto r = c.api.get("/api/v1/capsules/" + path_id(o->id) + "/outputs");
      if (!r) return failed(r.error());
      if (c.out.json()) {
        c.out.print_json(*r);
        return Exit::ok;
      }
      std::vector<std::vector<std::string>> rows;
      for (const auto& kv : r->as_object().at("outputs").as_object())
        rows.push_back({std::string(kv.key()), text_of(kv.value())});
      c.out.table({"NAME", "VALUE"}, rows);
      return Exit::ok;
    };
  });
}

void add_admin(CLI::App& app, std::shared_ptr<Options> o, std::optional<Handler>& chosen) {
  auto* conn = app.add_subcommand("connection", "Connections: create, list, revoke")->require_subcommand(1);
  auto* create = conn->add_subcommand("create", "create a Connection from a YAML or JSON file");
  create->add_option("-f,--file", o->file, "the Connection (the API's request body; - for stdin)")->required();
  create->add_option("--workspace", o->workspace, "its Workspace, unless the file names it")
      ;
  create->callback([&chosen, o] {
    chosen = [o](const Context& c) -> Exit {
      auto body = read_yaml_as_json(o->file);
      if (!body) return failed(body.error());
      if (!body->is_object()) return failed(Error{std::string(errc::kInvalidArgument), o->file + ": must be a mapping"});
      if (!body->as_object().contains("workspaceId")) {
        auto ws = workspace_of(c, o->workspace);
        if (!ws) return ws.error();
        body->as_object()["workspaceId"] = *ws;
      }
      return show_object(c, c.api.post("/api/v1/connections", *body), {"id", "name", "kind", "provider", "status"});
    };
  });
  auto* list = conn->add_subcommand("list", "list a Workspace's Connections (never their values)");
  list->add_option("--workspace", o->workspace, "the Workspace");
  list->callback([&chosen, o] {
    chosen = [o](const Context& c) -> Exit {
      auto ws = workspace_of(c, o->workspace);
      if (!ws) return ws.error();
      return show_list(c, "/api/v1/connections?workspaceId=" + *ws, "connections",
                       {"ID", "NAME", "KIND", "PROVIDER", "STATUS"}, [](const json::object& k) {
                         return std::vector{field(k, "id"), field(k, "name"), field(k, "kind"),
                                            field(k, "provider"), field(k, "status")};
                       });
    };
  });
  auto* revoke = conn->add_subcommand("revoke", "revoke a Connection");
  revoke->add_option("connection", o->id, "its id")->required();
  revoke->callback([&chosen, o] {
    chosen = [o](const Context& c) {
      return show_object(c, c.api.post("/api/v1/connections/" + path_id(o->id) + "/revoke", json::object{}),
                         {"id", "name", "status"});
    };
  });

  auto* agents = app.add_subcommand("agents", "list agents (admin token); agents revoke ID");
  agents->callback([&chosen, agents] {
    if (!agents->get_subcommands().empty()) return;
    chosen = [](const Context& c) {
      return show_list(c, "/api/v1/agents", "agents",
                       {"ID", "NAME", "STATE", "VERSION", "SLOTS", "LAST HEARTBEAT", "CERTIFICATE"},
                       [](const json::object& a) {
                         const auto& s = a.at("slots").as_object();
                         return std::vector{field(a, "id"), field(a, "name"), field(a, "state"),
                                            field(a, "version"), field(s, "busy") + "/" + field(s, "total"),
                                            time_text(a.at("lastHeartbeatAt")), field(a, "certificateIdentity")};
                       });
    };
  });
  auto* revoke_agent = agents->add_subcommand("revoke", "revoke an agent: it stops and exits 3");
  revoke_agent->add_option("agent", o->id, "its id")->required();
  revoke_agent->callback([&chosen, o] {
    chosen = [o](const Context& c) {
      return show_object(c, c.api.post("/api/v1/agents/" + path_id(o->id) + "/revoke", json::object{}),
                         {"id", "name", "state", "revokedAt"});
    };
  });

  auto* activity = app.add_subcommand("activity", "a Workspace's audit trail, newest first");
  activity->add_option("--workspace", o->workspace, "the Workspace");
  activity->add_option("--limit", o->limit, "how many")->check(CLI::Range(1, 200));
  activity->callback([&chosen, o] {
    chosen = [o](const Context& c) -> Exit {
      auto ws = workspace_of(c, o->workspace);
      if (!ws) return ws.error();
      return show_list(c, "/api/v1/workspaces/" + *ws + "/activity?limit=" + std::to_string(o->limit),
                       "events", {"TIME", "ACTOR", "ACTION", "CAPSULE", "RUN"}, [](const json::object& e) {
                         return std::vector{time_text(e.at("at")), field(e, "actor"), field(e, "action"),
                                            field(e, "capsuleId"), field(e, "runId")};
                       });
    };
  });
}

// Offline Runs (docs/air-gapped.md): an offline agent from its exported keys, a Run out as a
// bundle, its result back in.
void add_offline(CLI::App& app, std::shared_ptr<Options> o, std::optional<Handler>& chosen) {
  auto* agents = app.get_subcommand("agents");
  auto* reg = agents->add_subcommand(
      "register-offline", "register an offline agent from `takosumi-agent keys export` (admin)");
  reg->add_option("keys", o->file, "the exported keys (JSON; - for stdin)")->required();
  reg->add_option("--pool", o->pool, "its offline pool")->required();
  reg->callback([&chosen, o] {
    chosen = [o](const Context& c) -> Exit {
      auto body = read_yaml_as_json(o->file);
      if (!body) return failed(body.error());
      if (!body->is_object())
        return failed(Error{std::string(errc::kInvalidArgument), o->file + ": must be a mapping"});
      body->as_object()["pool"] = o->pool;
      return show_object(c, c.api.post("/api/v1/agents/offline", *body), {"id", "name", "pool"});
    };
  });

  auto* bundle = app.add_subcommand("run-bundle", "offline Runs: export a Run, import its result")
                     ->require_subcommand(1);
  auto* out = bundle->add_subcommand("export", "write a queued Run as an offline Run bundle");
  out->add_option("run", o->id, "the Run")->required();
  out->add_option("--agent", o->agent, "the offline agent that will run it")->required();
  out->add_option("--out", o->out, "the bundle file to write")->required();
  out->add_option("--valid-for", o->valid_for, "seconds the bundle is valid (default 7 days)")
      ->check(CLI::Range(std::int64_t{600}, std::int64_t{90} * 86400));
  out->callback([&chosen, o] {
    chosen = [o](const Context& c) -> Exit {
      json::object body{{"agentId", path_id(o->agent)}};
      if (o->valid_for > 0) body["validForSeconds"] = o->valid_for;
      auto written = c.api.post_for_file("/api/v1/runs/" + path_id(o->id) + "/bundle", body, o->out);
      if (!written) return failed(written.error());
      if (c.out.json())
        c.out.print_json(json::object{{"runId", o->id}, {"agentId", o->agent}, {"bundle", o->out}});
      else
        std::cout << "run " << o->id << ": bundle for agent " << o->agent << " written to "
                  << o->out << "\n";
      return Exit::ok;
    };
  });
  auto* in = bundle->add_subcommand("import", "record the result bundle an offline agent wrote");
  in->add_option("result", o->file, "the result bundle")->required();
  in->callback([&chosen, o] {
    chosen = [o](const Context& c) -> Exit {
      auto opened = protocol::open_bundle(o->file);
      if (!opened) return failed(opened.error());
      auto claim = protocol::peek_run_result(opened->index);
      if (!claim) return failed(claim.error());
      return show_object(c, c.api.post_file("/api/v1/runs/" + path_id(claim->run_id) + "/result",
                                            o->file),
                         {"runId", "imported", "status", "stateVersionId"});
    };
  });
}

}  // namespace

void add_commands(CLI::App& app, std::optional<Handler>& chosen) {
  auto options = std::make_shared<Options>();
  add_workspace(app, options, chosen);
  add_capsule(app, options, chosen);
  add_runs(app, options, chosen);
  add_state(app, options, chosen);
  add_admin(app, options, chosen);
  add_offline(app, options, chosen);
}

}  // namespace takosumi::cli
