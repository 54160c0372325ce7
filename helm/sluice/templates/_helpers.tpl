{{/* Names */}}
{{- define "sluice.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "sluice.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "sluice.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "sluice.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "sluice.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* Labels. Component ones take (dict "ctx" $ "component" "api"|"worker"). */}}
{{- define "sluice.selectorLabels" -}}
app.kubernetes.io/name: {{ include "sluice.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "sluice.labels" -}}
helm.sh/chart: {{ include "sluice.chart" . }}
{{ include "sluice.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: sluice
{{- end -}}

{{- define "sluice.componentSelectorLabels" -}}
{{ include "sluice.selectorLabels" .ctx }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "sluice.componentLabels" -}}
{{ include "sluice.labels" .ctx }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/* Deployment shape */}}
{{- define "sluice.clustered" -}}
{{- if eq .Values.state.backend "redis" -}}true{{- end -}}
{{- end -}}

{{- define "sluice.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{- define "sluice.secretName" -}}
{{- default (include "sluice.fullname" .) .Values.existingSecret -}}
{{- end -}}

{{- define "sluice.hasChartSecret" -}}
{{- /* existingSecret replaces authKey and credentials.file (validate.yaml refuses both), not the Redis password or the audit URL. */ -}}
{{- if or .Values.authKey .Values.credentials.file (and .Values.externalRedis.password (not .Values.externalRedis.existingSecret)) (include "sluice.auditPostgresUrlInChartSecret" .) -}}true{{- end -}}
{{- end -}}

{{- define "sluice.hasCredentials" -}}
{{- if or .Values.existingSecret .Values.credentials.file -}}true{{- end -}}
{{- end -}}

{{- define "sluice.rulesConfigMap" -}}
{{- if .Values.rules.existingConfigMap -}}
{{- .Values.rules.existingConfigMap -}}
{{- else if .Values.rules.files -}}
{{- printf "%s-rules" (include "sluice.fullname" .) -}}
{{- end -}}
{{- end -}}

{{- define "sluice.terminationGracePeriodSeconds" -}}
{{- $timeout := int (dig "server" "shutdown_timeout_seconds" 30 (.Values.config | default dict)) -}}
{{- $drain := int (dig "server" "drain_delay_seconds" 5 (.Values.config | default dict)) -}}
{{- add $timeout $drain .Values.shutdown.preStopSleepSeconds .Values.shutdown.extraGraceSeconds -}}
{{- end -}}

{{/* The audit database URL kept in the chart's own Secret (auditPostgres.url without existingSecret). */}}
{{- define "sluice.auditPostgresUrlInChartSecret" -}}
{{- if and .Values.auditPostgres.enabled .Values.auditPostgres.url (not .Values.auditPostgres.existingSecret) -}}true{{- end -}}
{{- end -}}

{{/* Redis: host, password source, URL (with $(REDIS_PASSWORD) expanded by the kubelet). */}}
{{- define "sluice.redisHost" -}}
{{- if .Values.redis.enabled -}}
{{- printf "%s-redis" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- .Values.externalRedis.host -}}
{{- end -}}
{{- end -}}

{{- define "sluice.redisPasswordSecret" -}}
{{- if .Values.redis.enabled -}}
{{- else if .Values.externalRedis.existingSecret -}}
{{- .Values.externalRedis.existingSecret -}}
{{- else if .Values.externalRedis.password -}}
{{- include "sluice.fullname" . -}}
{{- end -}}
{{- end -}}

{{- define "sluice.redisPasswordKey" -}}
{{- if .Values.externalRedis.existingSecret -}}
{{- .Values.externalRedis.existingSecretPasswordKey -}}
{{- else -}}
redis-password
{{- end -}}
{{- end -}}

{{- define "sluice.redisUrl" -}}
{{- $scheme := ternary "rediss" "redis" (and (not .Values.redis.enabled) .Values.externalRedis.tls.enabled) -}}
{{- $auth := "" -}}
{{- if include "sluice.redisPasswordSecret" . -}}
{{- $auth = printf "%s:$(REDIS_PASSWORD)@" .Values.externalRedis.username -}}
{{- end -}}
{{- $port := ternary 6379 (int .Values.externalRedis.port) (eq (toString .Values.redis.enabled) "true") -}}
{{- $db := ternary 0 (int .Values.externalRedis.db) (eq (toString .Values.redis.enabled) "true") -}}
{{- printf "%s://%s%s:%d/%d" $scheme $auth (include "sluice.redisHost" .) $port $db -}}
{{- end -}}

{{/* sluice.yaml's state section: the backend, and with an external Cluster or Sentinels their addresses (the single primary's URL comes from the env). */}}
{{- define "sluice.stateConfig" -}}
{{- $state := dict "backend" .Values.state.backend "prefix" .Values.state.prefix -}}
{{- if and (include "sluice.clustered" .) (not .Values.redis.enabled) -}}
{{- $r := .Values.externalRedis -}}
{{- if eq $r.topology "cluster" -}}
{{- $_ := set $state "cluster" (dict "nodes" $r.nodes) -}}
{{- else if eq $r.topology "sentinel" -}}
{{- $_ := set $state "sentinels" $r.nodes -}}
{{- $_ := set $state "name" $r.sentinelName -}}
{{- end -}}
{{- if and (ne $r.topology "single") (include "sluice.redisPasswordSecret" .) -}}
{{- $_ := set $state "password_env" "REDIS_PASSWORD" -}}
{{- if and (eq $r.topology "sentinel") $r.sentinelAuth -}}
{{- $_ := set $state "sentinel_password_env" "REDIS_PASSWORD" -}}
{{- end -}}
{{- end -}}
{{- if $r.waitReplicas -}}
{{- $_ := set $state "wait_replicas" (int $r.waitReplicas) -}}
{{- end -}}
{{- if $r.allowEviction -}}
{{- $_ := set $state "allow_eviction" true -}}
{{- end -}}
{{- end -}}
{{- toYaml $state -}}
{{- end -}}

{{/* sluice.yaml: the user's config plus the keys the chart owns. */}}
{{- define "sluice.configYaml" -}}
{{- $owned := dict
  "server" (dict "host" "0.0.0.0" "port" (int .Values.api.containerPort))
  "worker" (dict "host" "0.0.0.0" "port" (int .Values.worker.containerPort))
  "state" (include "sluice.stateConfig" . | fromYaml) -}}
{{- if include "sluice.rulesConfigMap" . -}}
{{- $_ := set $owned "rules" (dict "directory" "/etc/sluice/rules") -}}
{{- end -}}
{{- if .Values.auditPostgres.enabled -}}
{{- $_ := set $owned "audit" (dict "backend" "postgres" "postgres" (dict "url_env" "AUDIT_DATABASE_URL" "schema" .Values.auditPostgres.schema "pool_size" (int .Values.auditPostgres.poolSize))) -}}
{{- end -}}
{{- toYaml (mergeOverwrite (deepCopy (.Values.config | default dict)) $owned) -}}
{{- end -}}

{{/*
Pod-level pieces shared by the api and worker Deployments.
Takes (dict "ctx" $ "component" "api"|"worker" "values" .Values.api|.Values.worker).
*/}}
{{- define "sluice.podAnnotations" -}}
checksum/config: {{ include "sluice.configYaml" .ctx | sha256sum }}
{{- if and .ctx.Values.rules.files (not .ctx.Values.rules.existingConfigMap) }}
checksum/rules: {{ toYaml .ctx.Values.rules.files | sha256sum }}
{{- end }}
{{- if include "sluice.hasChartSecret" .ctx }}
checksum/secret-env: {{ printf "%s/%s/%s" .ctx.Values.authKey .ctx.Values.externalRedis.password .ctx.Values.auditPostgres.url | sha256sum }}
{{- end }}
{{- with .values.podAnnotations }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- define "sluice.env" -}}
{{- $ctx := .ctx -}}
{{- if include "sluice.clustered" $ctx }}
{{- with include "sluice.redisPasswordSecret" $ctx }}
- name: REDIS_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ . }}
      key: {{ include "sluice.redisPasswordKey" $ctx }}
{{- end }}
{{- if or $ctx.Values.redis.enabled (eq $ctx.Values.externalRedis.topology "single") }}
- name: SLUICE_STATE__URL
  value: {{ include "sluice.redisUrl" $ctx | quote }}
{{- end }}
{{- end }}
{{- if $ctx.Values.auditPostgres.enabled }}
- name: AUDIT_DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ default (include "sluice.fullname" $ctx) $ctx.Values.auditPostgres.existingSecret }}
      key: {{ ternary $ctx.Values.auditPostgres.existingSecretUrlKey "audit-postgres-url" (not (empty $ctx.Values.auditPostgres.existingSecret)) }}
{{- end }}
{{- if or $ctx.Values.existingSecret $ctx.Values.authKey }}
- name: SLUICE_AUTH_KEY
  valueFrom:
    secretKeyRef:
      name: {{ include "sluice.secretName" $ctx }}
      key: auth-key
      optional: {{ not $ctx.Values.authKey }}
{{- end }}
{{- if include "sluice.redisCaSecret" $ctx }}
- name: NODE_EXTRA_CA_CERTS
  value: /etc/sluice/redis-ca/ca.crt
{{- end }}
{{- with .values.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* The Secret with the CA of a rediss:// server, when one is given and TLS is on; empty otherwise. */}}
{{- define "sluice.redisCaSecret" -}}
{{- if and (include "sluice.clustered" .) (not .Values.redis.enabled) .Values.externalRedis.tls.enabled -}}
{{- .Values.externalRedis.tls.caSecret -}}
{{- end -}}
{{- end -}}

{{- define "sluice.volumeMounts" -}}
- name: config
  mountPath: /etc/sluice/sluice.yaml
  subPath: sluice.yaml
  readOnly: true
{{- if include "sluice.rulesConfigMap" .ctx }}
- name: rules
  mountPath: /etc/sluice/rules
  readOnly: true
{{- end }}
{{- if include "sluice.hasCredentials" .ctx }}
- name: credentials
  mountPath: /etc/sluice/credentials
  readOnly: true
{{- end }}
{{- if include "sluice.redisCaSecret" .ctx }}
- name: redis-ca
  mountPath: /etc/sluice/redis-ca
  readOnly: true
{{- end }}
- name: tmp
  mountPath: /tmp
{{- end -}}

{{- define "sluice.volumes" -}}
- name: config
  configMap:
    name: {{ include "sluice.fullname" .ctx }}-config
{{- with include "sluice.rulesConfigMap" .ctx }}
- name: rules
  configMap:
    name: {{ . }}
{{- end }}
{{- if include "sluice.hasCredentials" .ctx }}
- name: credentials
  secret:
    secretName: {{ include "sluice.secretName" .ctx }}
    optional: {{ not .ctx.Values.credentials.file }}
    items:
      - key: credentials.yaml
        path: credentials.yaml
{{- end }}
{{- with include "sluice.redisCaSecret" .ctx }}
- name: redis-ca
  secret:
    secretName: {{ . }}
    items:
      - key: ca.crt
        path: ca.crt
{{- end }}
- name: tmp
  emptyDir:
    sizeLimit: 64Mi
{{- end -}}

{{- define "sluice.probe" -}}
{{- $p := .probe -}}
httpGet:
  path: {{ .path }}
  port: {{ .port }}
{{- with $p.initialDelaySeconds }}
initialDelaySeconds: {{ . }}
{{- end }}
periodSeconds: {{ $p.periodSeconds }}
timeoutSeconds: {{ $p.timeoutSeconds }}
failureThreshold: {{ $p.failureThreshold }}
{{- end -}}

{{- define "sluice.probes" -}}
{{- $probes := .values.probes -}}
{{- if $probes.startup.enabled }}
startupProbe:
  {{- include "sluice.probe" (dict "probe" $probes.startup "path" "/health" "port" .port) | nindent 2 }}
{{- end }}
{{- if $probes.liveness.enabled }}
livenessProbe:
  {{- include "sluice.probe" (dict "probe" $probes.liveness "path" "/health" "port" .port) | nindent 2 }}
{{- end }}
{{- if $probes.readiness.enabled }}
readinessProbe:
  {{- include "sluice.probe" (dict "probe" $probes.readiness "path" "/ready" "port" .port) | nindent 2 }}
{{- end }}
{{- end -}}

{{- define "sluice.podSpec" -}}
{{- $ctx := .ctx -}}
{{- $v := .values -}}
serviceAccountName: {{ include "sluice.serviceAccountName" $ctx }}
automountServiceAccountToken: false
enableServiceLinks: false
terminationGracePeriodSeconds: {{ include "sluice.terminationGracePeriodSeconds" $ctx }}
{{- with $ctx.Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $v.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
securityContext:
  {{- toYaml $ctx.Values.podSecurityContext | nindent 2 }}
containers:
  - name: {{ .component }}
    image: {{ include "sluice.image" $ctx | quote }}
    imagePullPolicy: {{ $ctx.Values.image.pullPolicy }}
    args:
      {{- toYaml .args | nindent 6 }}
    ports:
      - name: {{ .portName }}
        containerPort: {{ $v.containerPort }}
        protocol: TCP
    {{- with include "sluice.env" . | trim }}
    env:
      {{- . | nindent 6 }}
    {{- end }}
    {{- include "sluice.probes" (dict "values" $v "port" .portName) | trim | nindent 4 }}
    lifecycle:
      preStop:
        exec:
          command: ["sleep", "{{ $ctx.Values.shutdown.preStopSleepSeconds }}"]
    resources:
      {{- toYaml $v.resources | nindent 6 }}
    securityContext:
      {{- toYaml $ctx.Values.securityContext | nindent 6 }}
    volumeMounts:
      {{- include "sluice.volumeMounts" . | trim | nindent 6 }}
volumes:
  {{- include "sluice.volumes" . | trim | nindent 2 }}
{{- with $v.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $v.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $v.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $v.topologySpreadConstraints }}
{{- /* a constraint without labelSelector spreads this component's pods */}}
{{- $selector := dict "matchLabels" (include "sluice.componentSelectorLabels" $ | fromYaml) }}
topologySpreadConstraints:
  {{- range . }}
  - {{ toYaml (ternary . (merge (dict "labelSelector" $selector) .) (hasKey . "labelSelector")) | nindent 4 | trim }}
  {{- end }}
{{- end }}
{{- end -}}
