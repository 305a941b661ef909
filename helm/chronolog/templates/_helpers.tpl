{{/*
Expand the name of the chart.
*/}}
{{- define "chronolog.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Create a default fully qualified app name.  Kept to 40 characters: component
suffixes ("-reasoner-12-headless") and StatefulSet pod names must still fit
Kubernetes' 63-character limits.
*/}}
{{- define "chronolog.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 40 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 40 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Create chart name and version as used by the chart label.
*/}}
{{- define "chronolog.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Common labels
*/}}
{{- define "chronolog.labels" -}}
helm.sh/chart: {{ include "chronolog.chart" . }}
{{ include "chronolog.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: chronolog
{{- end }}

{{/*
Selector labels
*/}}
{{- define "chronolog.selectorLabels" -}}
app.kubernetes.io/name: {{ include "chronolog.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
The workloads of the fleet, one per (service, stratum), as a YAML list.
layout perStratum: ingest (a Deployment), grounding, reasoner-1..S and
output (StatefulSets with one pod per partition).  layout chain (`chronolog
up --chain`): chain (a StatefulSet with one pod per partition: grounding,
every stratum and output in one process), and ingest only with more than
one partition (with one, the chain reads the input topic itself).  Each
item: name (resource suffix), service (the `chronolog service` argument and
the key of its per-component values), stratum ("" outside reasoners),
partitioned.
*/}}
{{- define "chronolog.workloads" -}}
{{- $strata := int .Values.strata }}
{{- if lt $strata 1 }}
{{- fail "strata must be at least 1: run `chronolog topology PROGRAM` and count its reasoner services" }}
{{- end }}
{{- if eq (include "chronolog.layout" .) "chain" }}
{{- if gt (int .Values.partitions) 1 }}
- {name: ingest, service: ingest, stratum: "", partitioned: false}
{{- end }}
- {name: chain, service: chain, stratum: "", partitioned: true}
{{- else }}
- {name: ingest, service: ingest, stratum: "", partitioned: false}
- {name: grounding, service: grounding, stratum: "", partitioned: true}
{{- range $k := untilStep 1 (int (add1 $strata)) 1 }}
- {name: reasoner-{{ $k }}, service: reasoner, stratum: "{{ $k }}", partitioned: true}
{{- end }}
- {name: output, service: output, stratum: "", partitioned: true}
{{- end }}
{{- end }}

{{/*
The fleet layout: perStratum or chain (validated here as well as by the
schema, for installs that skip it).
*/}}
{{- define "chronolog.layout" -}}
{{- $layout := .Values.layout | default "perStratum" }}
{{- if not (has $layout (list "perStratum" "chain")) }}
{{- fail "layout must be perStratum or chain" }}
{{- end }}
{{- $layout }}
{{- end }}

{{/*
Labels that select the pods of one workload.  Arguments: dict "ctx" (root
context) "w" (workload item).
*/}}
{{- define "chronolog.workloadSelectorLabels" -}}
{{ include "chronolog.selectorLabels" .ctx }}
app.kubernetes.io/component: {{ .w.service }}
chronolog.io/workload: {{ .w.name }}
{{- if .w.stratum }}
chronolog.io/stratum: {{ .w.stratum | quote }}
{{- end }}
{{- end }}

{{- define "chronolog.workloadLabels" -}}
{{ include "chronolog.labels" .ctx }}
app.kubernetes.io/component: {{ .w.service }}
chronolog.io/workload: {{ .w.name }}
{{- if .w.stratum }}
chronolog.io/stratum: {{ .w.stratum | quote }}
{{- end }}
{{- end }}

{{/*
Create the name of the service account to use
*/}}
{{- define "chronolog.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "chronolog.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "chronolog.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion | toString) }}
{{- end }}

{{/*
The Secret holding the SASL credentials: the user's existingSecret, or the
one this chart renders.
*/}}
{{- define "chronolog.saslSecretName" -}}
{{- if .Values.kafka.sasl.existingSecret }}
{{- .Values.kafka.sasl.existingSecret }}
{{- else }}
{{- printf "%s-kafka" (include "chronolog.fullname" .) }}
{{- end }}
{{- end }}

{{- define "chronolog.securityProtocol" -}}
{{- if and .Values.kafka.sasl.enabled .Values.kafka.tls.enabled }}SASL_SSL
{{- else if .Values.kafka.sasl.enabled }}SASL_PLAINTEXT
{{- else if .Values.kafka.tls.enabled }}SSL
{{- else }}PLAINTEXT
{{- end }}
{{- end }}

{{/*
The librdkafka properties file given to every service with --kafka-config.
No secret goes here: SASL credentials reach the clients as
CHRONOLOG_KAFKA_SASL_USERNAME / CHRONOLOG_KAFKA_SASL_PASSWORD from a Secret.
*/}}
{{- define "chronolog.kafkaProperties" -}}
# librdkafka client properties, merged into every chronolog Kafka client.
# Credentials are not here: they come from environment variables set from a Secret.
security.protocol={{ include "chronolog.securityProtocol" . }}
{{- if .Values.kafka.sasl.enabled }}
sasl.mechanism={{ required "kafka.sasl.mechanism is required when kafka.sasl.enabled" .Values.kafka.sasl.mechanism }}
{{- end }}
{{- if and .Values.kafka.tls.enabled .Values.kafka.tls.caSecret }}
ssl.ca.location=/etc/chronolog/kafka/ca/{{ .Values.kafka.tls.caKey }}
{{- end }}
{{- if and .Values.kafka.tls.enabled .Values.kafka.tls.clientSecret }}
ssl.certificate.location=/etc/chronolog/kafka/client/tls.crt
ssl.key.location=/etc/chronolog/kafka/client/tls.key
{{- end }}
{{- range $k, $v := .Values.kafka.config }}
{{- if regexMatch "(?i)(password|secret|sasl\\.username|sasl\\.oauthbearer\\.client)" $k }}
{{- fail (printf "kafka.config.%s looks like a credential: put it in a Secret and use extraEnvFrom with CHRONOLOG_KAFKA_* variables" $k) }}
{{- end }}
{{ $k }}={{ $v }}
{{- end }}
{{- end }}

{{/*
Program file paths as arguments, in the order Helm ranges over the map
(sorted by name).
*/}}
{{- define "chronolog.programArgs" -}}
{{- if not .Values.program.files }}
{{- fail "program.files must name at least one program file" }}
{{- end }}
{{- range $name, $_ := .Values.program.files }}
{{- if not (regexMatch "^[A-Za-z0-9][A-Za-z0-9._-]*$" $name) }}
{{- fail (printf "program.files: %q is not a plain file name (letters, digits, '.', '_', '-')" $name) }}
{{- end }}
- /etc/chronolog/program/{{ $name }}
{{- end }}
{{- with .Values.program.dialect }}
- --dialect
- {{ . }}
{{- end }}
{{- end }}

{{/*
Kafka connection arguments shared by services and create-topics.
*/}}
{{- define "chronolog.kafkaArgs" -}}
- --bootstrap
- {{ required "kafka.bootstrap is required (HOST:PORT[,HOST:PORT...])" .Values.kafka.bootstrap | quote }}
- --kafka-config
- /etc/chronolog/kafka/client.properties
- --topic-prefix
- {{ .Values.topicPrefix | quote }}
{{- end }}

{{/*
Environment of every chronolog container: SASL credentials from a Secret.
Argument: dict "ctx" (root) "secret" (the Secret's name).
*/}}
{{- define "chronolog.kafkaEnv" -}}
{{- with .ctx.Values.kafka.sasl }}
{{- if .enabled }}
- name: CHRONOLOG_KAFKA_SASL_USERNAME
  valueFrom:
    secretKeyRef:
      name: {{ $.secret }}
      key: {{ .usernameKey }}
- name: CHRONOLOG_KAFKA_SASL_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ $.secret }}
      key: {{ .passwordKey }}
{{- end }}
{{- end }}
{{- with .ctx.Values.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/*
Volume mounts and volumes for the program and the Kafka client config.
Argument: dict "ctx" (root) "programConfigMap" (name) "kafkaConfigMap" (name).
*/}}
{{- define "chronolog.configVolumeMounts" -}}
- name: program
  mountPath: /etc/chronolog/program
  readOnly: true
- name: kafka-config
  mountPath: /etc/chronolog/kafka/client.properties
  subPath: client.properties
  readOnly: true
{{- if and .Values.kafka.tls.enabled .Values.kafka.tls.caSecret }}
- name: kafka-ca
  mountPath: /etc/chronolog/kafka/ca
  readOnly: true
{{- end }}
{{- if and .Values.kafka.tls.enabled .Values.kafka.tls.clientSecret }}
- name: kafka-client-tls
  mountPath: /etc/chronolog/kafka/client
  readOnly: true
{{- end }}
- name: tmp
  mountPath: /tmp
{{- end }}

{{- define "chronolog.configVolumes" -}}
- name: program
  configMap:
    name: {{ .programConfigMap }}
- name: kafka-config
  configMap:
    name: {{ .kafkaConfigMap }}
{{- with .ctx.Values.kafka.tls }}
{{- if and .enabled .caSecret }}
- name: kafka-ca
  secret:
    secretName: {{ .caSecret }}
    items:
      - key: {{ .caKey }}
        path: {{ .caKey }}
{{- end }}
{{- if and .enabled .clientSecret }}
- name: kafka-client-tls
  secret:
    secretName: {{ .clientSecret }}
    defaultMode: 0440
    items:
      - key: tls.crt
        path: tls.crt
      - key: tls.key
        path: tls.key
{{- end }}
{{- end }}
- name: tmp
  emptyDir:
    sizeLimit: 64Mi
{{- end }}

{{/*
Checksums of the configuration the pods read at start, so that a changed
program or client config rolls the fleet.
*/}}
{{- define "chronolog.configChecksums" -}}
checksum/program: {{ toYaml .Values.program.files | sha256sum }}
checksum/kafka-config: {{ include "chronolog.kafkaProperties" . | sha256sum }}
{{- end }}

{{/*
The `chronolog create-topics` command.
*/}}
{{- define "chronolog.createTopicsArgs" -}}
- create-topics
{{ include "chronolog.programArgs" . | trim }}
{{ include "chronolog.kafkaArgs" . }}
- --partitions
- {{ .Values.partitions | quote }}
- --input-partitions
- {{ .Values.inputPartitions | quote }}
{{- if eq (include "chronolog.layout" .) "chain" }}
- --chain
{{- end }}
{{- end }}

{{/*
The create-topics container (hook Job or initContainer).  Argument: dict
"ctx" (root) "secret" (name of the Secret with the SASL credentials).
*/}}
{{- define "chronolog.createTopicsContainer" -}}
{{- $ := .ctx }}
name: create-topics
image: {{ include "chronolog.image" $ }}
imagePullPolicy: {{ $.Values.image.pullPolicy }}
command: ["chronolog"]
args:
{{- include "chronolog.createTopicsArgs" $ | nindent 2 }}
env:
  - name: PYTHONDONTWRITEBYTECODE
    value: "1"
{{- with include "chronolog.kafkaEnv" . }}
{{- . | nindent 2 }}
{{- end }}
{{- with $.Values.extraEnvFrom }}
envFrom:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  {{- toYaml $.Values.securityContext | nindent 2 }}
resources:
  {{- toYaml $.Values.topics.resources | nindent 2 }}
volumeMounts:
  {{- include "chronolog.configVolumeMounts" $ | nindent 2 }}
{{- end }}

{{/*
The pod template of one workload.  Arguments: dict "ctx" (root context) "w"
(workload item from chronolog.workloads).
*/}}
{{- define "chronolog.podTemplate" -}}
{{- $ := .ctx }}
{{- $w := .w }}
{{- $comp := index $.Values $w.service }}
{{- $fullname := include "chronolog.fullname" $ }}
{{- $byHostname := and $w.partitioned (eq $.Values.partitionFrom "hostname") }}
{{- if not (has $.Values.partitionFrom (list "podIndexLabel" "hostname")) }}
{{- fail "partitionFrom must be podIndexLabel or hostname" }}
{{- end }}
metadata:
  labels:
    {{- include "chronolog.workloadSelectorLabels" . | nindent 4 }}
    {{- with $.Values.podLabels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  annotations:
    {{- include "chronolog.configChecksums" $ | nindent 4 }}
    {{- if $.Values.metrics.podAnnotations }}
    prometheus.io/scrape: "true"
    prometheus.io/port: {{ $.Values.metrics.port | quote }}
    prometheus.io/path: /metrics
    {{- end }}
    {{- with $.Values.podAnnotations }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  serviceAccountName: {{ include "chronolog.serviceAccountName" $ }}
  automountServiceAccountToken: false
  enableServiceLinks: false
  {{- with $.Values.imagePullSecrets }}
  imagePullSecrets:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  securityContext:
    {{- toYaml $.Values.podSecurityContext | nindent 4 }}
  terminationGracePeriodSeconds: {{ $.Values.terminationGracePeriodSeconds }}
  {{- if and $.Values.topics.create (eq $.Values.topics.mode "initContainer") }}
  initContainers:
    - {{- include "chronolog.createTopicsContainer" (dict "ctx" $ "secret" (include "chronolog.saslSecretName" $)) | trim | nindent 6 }}
  {{- end }}
  containers:
    - name: {{ $w.service }}
      image: {{ include "chronolog.image" $ }}
      imagePullPolicy: {{ $.Values.image.pullPolicy }}
      {{- if $byHostname }}
      # The partition is the StatefulSet pod ordinal, the suffix of the pod's host name.
      command: ["/bin/sh", "-c", 'exec chronolog "$@" --partition "${HOSTNAME##*-}"', "chronolog"]
      {{- else }}
      command: ["chronolog"]
      {{- end }}
      args:
        - service
        - {{ $w.service }}
        {{- include "chronolog.programArgs" $ | trim | nindent 8 }}
        {{- include "chronolog.kafkaArgs" $ | nindent 8 }}
        {{- if $w.stratum }}
        - --stratum
        - {{ $w.stratum | quote }}
        {{- end }}
        {{- if and $w.partitioned (not $byHostname) }}
        - --partition
        - $(CHRONOLOG_POD_INDEX)
        {{- end }}
        - --partitions
        - {{ $.Values.partitions | quote }}
        - --input-partitions
        - {{ $.Values.inputPartitions | quote }}
        - --state-dir
        - {{ $.Values.stateDir | quote }}
        - --metrics-port
        - {{ $.Values.metrics.port | quote }}
        {{- if not (kindIs "invalid" $.Values.idleFlush) }}
        - --idle-flush
        - {{ $.Values.idleFlush | quote }}
        {{- end }}
        {{- if not (kindIs "invalid" $.Values.retention) }}
        - --retention
        - {{ $.Values.retention | quote }}
        {{- end }}
        {{- if not (kindIs "invalid" $.Values.window) }}
        - --window
        - {{ $.Values.window | quote }}
        {{- end }}
        {{- if not (kindIs "invalid" $.Values.step) }}
        - --step
        - {{ $.Values.step | quote }}
        {{- end }}
        {{- with $.Values.mode }}
        - --mode
        - {{ . | quote }}
        {{- end }}
        {{- with $.Values.seed }}
        - --seed
        - {{ . | quote }}
        {{- end }}
        {{- if $.Values.markNoAnswerSet }}
        - --mark-no-answer-set
        {{- end }}
        {{- with $comp.extraArgs }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      env:
        {{- if and $w.partitioned (not $byHostname) }}
        # The partition is the StatefulSet pod ordinal (label set by Kubernetes >= 1.28).
        - name: CHRONOLOG_POD_INDEX
          valueFrom:
            fieldRef:
              fieldPath: metadata.labels['apps.kubernetes.io/pod-index']
        {{- end }}
        - name: PYTHONDONTWRITEBYTECODE
          value: "1"
        {{- with include "chronolog.kafkaEnv" (dict "ctx" $ "secret" (include "chronolog.saslSecretName" $)) }}
        {{- . | nindent 8 }}
        {{- end }}
      {{- with $.Values.extraEnvFrom }}
      envFrom:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      ports:
        - name: metrics
          containerPort: {{ $.Values.metrics.port }}
          protocol: TCP
      {{- with $.Values.probes.startup }}
      startupProbe:
        httpGet:
          path: /metrics
          port: metrics
        {{- toYaml . | nindent 8 }}
      {{- end }}
      livenessProbe:
        httpGet:
          path: /metrics
          port: metrics
        {{- toYaml $.Values.probes.liveness | nindent 8 }}
      readinessProbe:
        httpGet:
          path: /metrics
          port: metrics
        {{- toYaml $.Values.probes.readiness | nindent 8 }}
      securityContext:
        {{- toYaml $.Values.securityContext | nindent 8 }}
      resources:
        {{- toYaml $comp.resources | nindent 8 }}
      volumeMounts:
        {{- include "chronolog.configVolumeMounts" $ | nindent 8 }}
        - name: state
          mountPath: {{ $.Values.stateDir }}
  volumes:
    {{- include "chronolog.configVolumes" (dict "ctx" $ "programConfigMap" (printf "%s-program" $fullname) "kafkaConfigMap" (printf "%s-kafka" $fullname)) | nindent 4 }}
    {{- if not (and $w.partitioned $.Values.persistence.enabled) }}
    - name: state
      emptyDir:
        {{- with $.Values.persistence.emptyDirSizeLimit }}
        sizeLimit: {{ . }}
        {{- else }}
        {}
        {{- end }}
    {{- end }}
  {{- with ($comp.nodeSelector | default $.Values.nodeSelector) }}
  nodeSelector:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with ($comp.affinity | default $.Values.affinity) }}
  affinity:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with ($comp.tolerations | default $.Values.tolerations) }}
  tolerations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $.Values.topologySpreadConstraints }}
  topologySpreadConstraints:
    {{- tpl (toYaml .) $ | nindent 4 }}
  {{- end }}
{{- end }}
