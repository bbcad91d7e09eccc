{{/* Names are cut to 63 characters: they become label values and DNS labels. */}}
{{- define "buzz.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "buzz.fullname" -}}
{{- if contains .Chart.Name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{- define "buzz.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "buzz.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/part-of: buzz-operator
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* The chart's own managed-by stays Helm; trial pods carry managed-by=buzz-operator instead. */}}
{{- define "buzz.selectorLabels" -}}
app.kubernetes.io/name: {{ include "buzz.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "buzz.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "buzz.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* Namespaces served in namespaced mode (a JSON list so callers can range over it). */}}
{{- define "buzz.watchNamespaces" -}}
{{- if .Values.watch.namespaces }}
{{- toJson (uniq .Values.watch.namespaces) }}
{{- else }}
{{- toJson (list .Release.Namespace) }}
{{- end }}
{{- end }}

{{/* Namespaces whose trial pods get the NetworkPolicies. */}}
{{- define "buzz.policyNamespaces" -}}
{{- if not .Values.watch.allNamespaces }}
{{- include "buzz.watchNamespaces" . }}
{{- else if .Values.trialNetworkPolicy.namespaces }}
{{- toJson (uniq .Values.trialNetworkPolicy.namespaces) }}
{{- else }}
{{- toJson (list .Release.Namespace) }}
{{- end }}
{{- end }}

{{/* All-namespaces mode: the namespaces whose Secrets the operator may use (sweeps run there). */}}
{{- define "buzz.secretNamespaces" -}}
{{- if .Values.rbac.secretNamespaces }}
{{- toJson (uniq .Values.rbac.secretNamespaces) }}
{{- else }}
{{- include "buzz.policyNamespaces" . }}
{{- end }}
{{- end }}

{{- define "buzz.image" -}}
{{- printf "%s:%s" .Values.image.repository .Values.image.tag }}
{{- end }}

{{/* A random 64-hex secret kept across upgrades: the existing Secret's value wins. */}}
{{- define "buzz.keepOrRandomHex" -}}
{{- $secret := lookup "v1" "Secret" .namespace .name }}
{{- if and $secret (index ($secret.data | default dict) .key) }}
{{- index $secret.data .key | b64dec }}
{{- else }}
{{- randAlphaNum 64 | sha256sum }}
{{- end }}
{{- end }}

{{/* The in-cluster Postgres password: the existing Secret's, else one random value for the whole
render. Two templates need it (the Postgres Secret, the dev relay's DSN); a random value drawn in
each would differ on a first install and the relay could never log in, so the first draw is kept
on the root context, which every template of the chart shares. */}}
{{- define "buzz.postgresPassword" -}}
{{- if not (hasKey . "buzzPostgresPassword") }}
{{- $_ := set . "buzzPostgresPassword" (include "buzz.keepOrRandomHex" (dict "namespace" .Release.Namespace "name" (printf "%s-postgres" (include "buzz.fullname" .)) "key" "password")) }}
{{- end }}
{{- index . "buzzPostgresPassword" }}
{{- end }}

{{/* Restricted-profile container securityContext (Pod Security Standards "restricted"). */}}
{{- define "buzz.restrictedContainer" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsNonRoot: true
capabilities:
  drop: ["ALL"]
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{/* The bundle volume's claim: existingClaim, the chart's own, or "" for none. */}}
{{- define "buzz.bundlesClaim" -}}
{{- if .Values.bundles.existingClaim }}
{{- .Values.bundles.existingClaim }}
{{- else if .Values.bundles.claim.create }}
{{- printf "%s-bundles" (include "buzz.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{/* Paths of the operator pod that do not outlive it, where the operator refuses file:// storage
(storage/durability.py): "/" when bundles have no volume, the scratch emptyDirs beside a claim,
nothing when bundles.ephemeral accepts the loss. */}}
{{- define "buzz.ephemeralPaths" -}}
{{- if .Values.bundles.ephemeral }}
{{- else if include "buzz.bundlesClaim" . }}/tmp:/work
{{- else }}/
{{- end }}
{{- end }}
