#pragma once
// Everything the control plane keeps, as its API reaches it: one struct of references (owned by
// ControlPlane, outliving every user) instead of the same list in each dependencies struct.
#include "controlplane/store/agent_pool_store.hpp"
#include "controlplane/store/agent_registry.hpp"
#include "controlplane/store/api_token_store.hpp"
#include "controlplane/store/audit_log.hpp"
#include "controlplane/store/backup_store.hpp"
#include "controlplane/store/blob_store.hpp"
#include "controlplane/store/catalog_store.hpp"
#include "controlplane/store/connection_store.hpp"
#include "controlplane/store/dependency_store.hpp"
#include "controlplane/store/keys/keyring.hpp"
#include "controlplane/store/output_share_store.hpp"
#include "controlplane/store/pool_token_store.hpp"
#include "controlplane/store/run_log_store.hpp"
#include "controlplane/store/run_store.hpp"
#include "controlplane/store/db/database.hpp"
#include "controlplane/store/state_store.hpp"
#include "controlplane/store/workspace_plan_store.hpp"

namespace takosumi::controlplane {

struct Stores {
  Database& db;
  CatalogStore& catalog;
  RunStore& runs;
  StateStore& states;
  RunLogStore& logs;
  ConnectionStore& connections;
  DependencyStore& dependencies;
  OutputShareStore& shares;
  ApiTokenStore& tokens;
  WorkspacePlanStore& workspace_plans;
  BackupStore& backups;
  AgentRegistry& agents;
  PoolTokenStore& pool_tokens;
  AgentPoolStore& pools;
  AuditLog& audit;
  const BlobStore& blobs;
  const Keyring& keys;
};

}  // namespace takosumi::controlplane
