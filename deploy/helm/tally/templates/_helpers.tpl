{{/* Names and labels. */}}
{{- define "tally.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "tally.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "tally.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/name: {{ include "tally.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: tally
{{- end }}

{{/* Selector labels of one role: (dict "ctx" $ "role" "api"). */}}
{{- define "tally.selectorLabels" -}}
app.kubernetes.io/name: {{ include "tally.name" .ctx }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .role }}
{{- end }}

{{- define "tally.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "tally.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The roles, each with the process it runs (infra/Dockerfile: one image, the command picks). */}}
{{- define "tally.roles" -}}
api: services/api/main.ts
ingest: services/ingest/main.ts
dispatcher: services/dispatcher/main.ts
exporter: services/exporter/main.ts
{{- end }}

{{/*
Which roles are given each credential: a role gets only those it uses (the needs of each role.ts:
the api and the exporter use object storage; only the api serves keys, Redis windows, callers' SQL
and the analyst door).
*/}}
{{- define "tally.secretRoles" -}}
DATABASE_URL: [api, ingest, dispatcher, exporter]
CLICKHOUSE_URL: [api, ingest, dispatcher, exporter]
TALLY_CLICKHOUSE_CLUSTER_NODES: [api, ingest, dispatcher, exporter]
CLICKHOUSE_SQL_URL: [api]
CLICKHOUSE_ANALYST_URL: [api]
TALLY_ANALYST_PASSWORD: [api]
S3_ACCESS_KEY_ID: [api, exporter]
S3_SECRET_ACCESS_KEY: [api, exporter]
REDIS_URL: [api]
TALLY_BOOTSTRAP_API_KEY: [api]
TALLY_ADMIN_API_KEY: [api]
{{- end }}

{{/* Consumer group of a role as the broker and tally_consumer_lag{group} name it. */}}
{{- define "tally.consumerGroup" -}}
{{- printf "%stally-%s" (.ctx.Values.kafka.consumerGroupPrefix | default "") .role }}
{{- end }}

{{/* Refuses values that would deploy a broken or leaky Tally, naming the value to fix. */}}
{{- define "tally.validate" -}}
{{- $v := .Values }}
{{- $_ := required "existingSecret: name the Secret that holds Tally's credentials (README.md, \"Secrets\")" $v.existingSecret }}
{{- range $name := list "DATABASE_URL" "CLICKHOUSE_URL" }}
{{- if not (get $v.secretEnv $name | default dict).key }}
{{- fail (printf "secretEnv.%s.key: required (the key of %s in existingSecret, or in secretEnv.%s.secret)" $name $name $name) }}
{{- end }}
{{- end }}
{{- if not (or ($v.secretEnv.TALLY_BOOTSTRAP_API_KEY | default dict).key ($v.secretEnv.TALLY_ADMIN_API_KEY | default dict).key) }}
{{- fail "secretEnv.TALLY_BOOTSTRAP_API_KEY or secretEnv.TALLY_ADMIN_API_KEY: one is required (a separate api process prints no generated key)" }}
{{- end }}
{{- $_ = required "kafka.brokers: required (KAFKA_BROKERS), e.g. tally-kafka-bootstrap.kafka.svc:9092" $v.kafka.brokers }}
{{- $_ = required "s3.endpoint: required (S3_ENDPOINT): blobs must be shared by every pod" $v.s3.endpoint }}
{{- $_ = required "s3.bucket: required (S3_BUCKET)" $v.s3.bucket }}
{{- $_ = required "publicUrl: required (TALLY_PUBLIC_URL), the address users reach the API at" $v.publicUrl }}
{{- $secretRoles := include "tally.secretRoles" . | fromYaml }}
{{- range $name, $_ := $v.secretEnv }}
{{- if not (hasKey $secretRoles $name) }}
{{- fail (printf "secretEnv.%s: not a credential the chart knows; give it through extraEnv with valueFrom.secretKeyRef" $name) }}
{{- end }}
{{- end }}
{{- $envs := dict "env" $v.env }}
{{- range $role, $_ := include "tally.roles" . | fromYaml }}
{{- $_ := set $envs (printf "%s.env" $role) (get $v $role).env }}
{{- end }}
{{- range $where, $env := $envs }}
{{- range $name, $_ := $env }}
{{- if hasKey $secretRoles $name }}
{{- fail (printf "%s.%s: a credential never goes in a plain value; put it in a Secret and set secretEnv.%s" $where $name $name) }}
{{- end }}
{{- end }}
{{- end }}
{{- $extra := dict "extraEnv" $v.extraEnv }}
{{- range $role, $_ := include "tally.roles" . | fromYaml }}
{{- $_ := set $extra (printf "%s.extraEnv" $role) (get $v $role).extraEnv }}
{{- end }}
{{- range $where, $list := $extra }}
{{- range $list }}
{{- if and (hasKey $secretRoles (.name | default "")) (hasKey . "value") }}
{{- fail (printf "%s: %s holds a credential as a plain value; put it in a Secret and set secretEnv.%s" $where .name .name) }}
{{- end }}
{{- end }}
{{- end }}
{{- $chartSet := dict "HOST" "" "PORT" "service.port" "TALLY_METRICS_PORT" "healthPort" "TALLY_DATA_DIR" "" "TALLY_PUBLIC_URL" "publicUrl" "TALLY_LOG_LEVEL" "logLevel" "CLICKHOUSE_DATABASE" "clickhouse.database" "TALLY_CLICKHOUSE_CLUSTER" "clickhouse.cluster" "KAFKA_BROKERS" "kafka.brokers" "TALLY_TOPIC_PARTITIONS" "kafka.topicPartitions" "TALLY_CONSUMER_GROUP_PREFIX" "kafka.consumerGroupPrefix" "S3_ENDPOINT" "s3.endpoint" "S3_BUCKET" "s3.bucket" "S3_REGION" "s3.region" "TALLY_ANALYST_PORT" "analyst.port" }}
{{- range $where, $env := $envs }}
{{- range $name, $_ := $env }}
{{- if hasKey $chartSet $name }}
{{- fail (printf "%s.%s: set by the chart%s" $where $name (ternary "" (printf "; use %s" (get $chartSet $name)) (eq (get $chartSet $name) ""))) }}
{{- end }}
{{- end }}
{{- end }}
{{- if $v.analyst.enabled }}
{{- if not (and ($v.secretEnv.CLICKHOUSE_ANALYST_URL | default dict).key ($v.secretEnv.TALLY_ANALYST_PASSWORD | default dict).key) }}
{{- fail "analyst.enabled: needs secretEnv.CLICKHOUSE_ANALYST_URL and secretEnv.TALLY_ANALYST_PASSWORD" }}
{{- end }}
{{- end }}
{{- if and (not $v.analyst.enabled) (or ($v.secretEnv.CLICKHOUSE_ANALYST_URL | default dict).key ($v.secretEnv.TALLY_ANALYST_PASSWORD | default dict).key) }}
{{- fail "secretEnv.CLICKHOUSE_ANALYST_URL, TALLY_ANALYST_PASSWORD: they open the analyst door; set analyst.enabled to serve it on analyst.port" }}
{{- end }}
{{- if and ($v.secretEnv.TALLY_CLICKHOUSE_CLUSTER_NODES | default dict).key (not $v.clickhouse.cluster) }}
{{- fail "secretEnv.TALLY_CLICKHOUSE_CLUSTER_NODES: only with clickhouse.cluster (TALLY_CLICKHOUSE_CLUSTER)" }}
{{- end }}
{{- range $role := list "ingest" "dispatcher" }}
{{- $a := (get $v $role).autoscaling }}
{{- if and $a.enabled (gt (int $a.maxReplicas) (int $v.kafka.topicPartitions)) }}
{{- fail (printf "%s.autoscaling.maxReplicas (%d) exceeds kafka.topicPartitions (%d): a partition is read by one member of a group, the others would idle" $role (int $a.maxReplicas) (int $v.kafka.topicPartitions)) }}
{{- end }}
{{- end }}
{{- end }}

{{/* A credential's env entry: (dict "ctx" $ "name" "DATABASE_URL" "ref" {key, secret}). */}}
{{- define "tally.secretEnvVar" -}}
- name: {{ .name }}
  valueFrom:
    secretKeyRef:
      name: {{ .ref.secret | default .ctx.Values.existingSecret | quote }}
      key: {{ .ref.key | quote }}
{{- end }}

{{/* The env of one role's container: (dict "ctx" $ "role" "api"). */}}
{{- define "tally.env" -}}
{{- $v := .ctx.Values }}
{{- $role := .role }}
{{- $r := get $v $role }}
{{- $blobs := has $role (list "api" "exporter") }}
- name: HOST
  value: 0.0.0.0
{{- if eq $role "api" }}
- name: PORT
  value: {{ $v.service.port | quote }}
{{- if $v.analyst.enabled }}
- name: TALLY_ANALYST_PORT
  value: {{ $v.analyst.port | quote }}
{{- end }}
{{- else }}
- name: TALLY_METRICS_PORT
  value: {{ $v.healthPort | quote }}
{{- end }}
- name: TALLY_DATA_DIR
  value: /app/.tally
- name: TALLY_PUBLIC_URL
  value: {{ $v.publicUrl | quote }}
- name: TALLY_LOG_LEVEL
  value: {{ $v.logLevel | quote }}
- name: CLICKHOUSE_DATABASE
  value: {{ $v.clickhouse.database | quote }}
{{- with $v.clickhouse.cluster }}
- name: TALLY_CLICKHOUSE_CLUSTER
  value: {{ . | quote }}
{{- end }}
{{- if ne $role "exporter" }}
- name: KAFKA_BROKERS
  value: {{ $v.kafka.brokers | quote }}
- name: TALLY_TOPIC_PARTITIONS
  value: {{ $v.kafka.topicPartitions | quote }}
{{- with $v.kafka.consumerGroupPrefix }}
- name: TALLY_CONSUMER_GROUP_PREFIX
  value: {{ . | quote }}
{{- end }}
{{- end }}
{{- if $blobs }}
- name: S3_ENDPOINT
  value: {{ $v.s3.endpoint | quote }}
- name: S3_BUCKET
  value: {{ $v.s3.bucket | quote }}
- name: S3_REGION
  value: {{ $v.s3.region | quote }}
{{- end }}
{{- $secretRoles := include "tally.secretRoles" .ctx | fromYaml }}
{{- range $name, $ref := $v.secretEnv }}
{{- if and $ref $ref.key (has $role (get $secretRoles $name)) }}
{{ include "tally.secretEnvVar" (dict "ctx" $.ctx "name" $name "ref" $ref) }}
{{- end }}
{{- end }}
{{- range $name, $value := merge (dict) ($r.env | default dict) ($v.env | default dict) }}
{{- $text := toString $value }}
{{- /* YAML numbers reach templates as floats: 2147483648 would print as 2.147483648e+09. */}}
{{- if and (kindIs "float64" $value) (eq (float64 (int64 $value)) $value) }}
{{- $text = printf "%d" (int64 $value) }}
{{- end }}
- name: {{ $name }}
  value: {{ $text | quote }}
{{- end }}
{{- with $v.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- with $r.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end }}
