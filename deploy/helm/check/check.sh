#!/usr/bin/env bash
# npm run check:helm: helm lint --strict and helm template of deploy/helm/tally with each of its
# examples, every rendered manifest checked against the Kubernetes API's types, and the values the
# chart must refuse (HelmCheck.java). Needs java (17+) and mvn: Helm and the schemas are jars from
# Maven Central, cached in ~/.m2 after the first run.
set -euo pipefail
cd "$(dirname "$0")"
out=../../../.tools/helm-check
mkdir -p "$out"
if ! mvn -B -q -f pom.xml dependency:build-classpath -Dmdep.outputFile="$out/classpath.txt" >"$out/mvn.log" 2>&1; then
  cat "$out/mvn.log" >&2
  echo "helm check: Maven could not fetch the check's jars (log above)" >&2
  exit 1
fi
exec java -cp "$(cat "$out/classpath.txt")" HelmCheck.java ../tally .
