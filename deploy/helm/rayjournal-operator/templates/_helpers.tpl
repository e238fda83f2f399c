{{/* The name every object of the release carries. */}}
{{- define "rayjournal.name" -}}
{{- default "rayjournal-operator" .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "rayjournal.labels" -}}
app.kubernetes.io/name: {{ include "rayjournal.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
{{- with .Values.labels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- define "rayjournal.selector" -}}
app.kubernetes.io/name: {{ include "rayjournal.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "rayjournal.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "rayjournal.name" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* KubeRay's featureGates list as the --feature-gates flag: "A=true,B=false". */}}
{{- define "rayjournal.featureGates" -}}
{{- $gates := list -}}
{{- range .Values.featureGates -}}
{{- $gates = append $gates (printf "%s=%t" .name .enabled) -}}
{{- end -}}
{{- join "," $gates -}}
{{- end -}}
