package promcr

import (
	monv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	monv1alpha1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1alpha1"
	corev1 "k8s.io/api/core/v1"
)

// awsSD renders EC2 and Lightsail discovery; the access and secret keys come from secrets.
func (t *translator) awsSD(out *section, s monv1alpha1.ScrapeConfigSpec) error {
	err := t.sdList(out, "ec2SDConfigs", "ec2_sd_configs", len(s.EC2SDConfigs), func(sub *translator, i int) (section, error) {
		c := s.EC2SDConfigs[i]
		g, err := sub.awsAccess(c.Region, c.AccessKey, c.SecretKey, c.RoleARN)
		if err != nil {
			return nil, err
		}
		port(&g, c.Port)
		duration(&g, "refresh_interval", c.RefreshInterval)
		put(&g, "filters", filters(c.Filters))
		return g, sub.client(&g, monv1.HTTPConfigWithoutTLS{FollowRedirects: c.FollowRedirects, EnableHTTP2: c.EnableHTTP2}, c.TLSConfig, c.ProxyConfig)
	})
	if err != nil {
		return err
	}
	return t.sdList(out, "lightSailSDConfigs", "lightsail_sd_configs", len(s.LightSailSDConfigs), func(sub *translator, i int) (section, error) {
		c := s.LightSailSDConfigs[i]
		g, err := sub.awsAccess(c.Region, c.AccessKey, c.SecretKey, c.RoleARN)
		if err != nil {
			return nil, err
		}
		put(&g, "endpoint", c.Endpoint)
		port(&g, c.Port)
		duration(&g, "refresh_interval", c.RefreshInterval)
		return g, sub.client(&g, monv1.HTTPConfigWithoutTLS{BasicAuth: c.BasicAuth, Authorization: c.Authorization, OAuth2: c.OAuth2,
			FollowRedirects: c.FollowRedirects, EnableHTTP2: c.EnableHTTP2}, c.TLSConfig, c.ProxyConfig)
	})
}

// awsAccess renders the region and credentials EC2 and Lightsail discovery share.
func (t *translator) awsAccess(region *string, access, secret *corev1.SecretKeySelector, roleARN *string) (section, error) {
	var g section
	put(&g, "region", region)
	if err := t.putSecret(&g, "access_key", "accessKey", access); err != nil {
		return nil, err
	}
	if err := t.putSecret(&g, "secret_key", "secretKey", secret); err != nil {
		return nil, err
	}
	put(&g, "role_arn", roleARN)
	return g, nil
}

// cloudSD renders the discovery of the other clouds' instances: Azure, GCE, OpenStack,
// DigitalOcean, Linode, Hetzner, OVHcloud, Scaleway and IONOS.
func (t *translator) cloudSD(out *section, s monv1alpha1.ScrapeConfigSpec) error {
	for _, render := range []func(*section, monv1alpha1.ScrapeConfigSpec) error{t.azureAndGCESD, t.openStackSD, t.hostingSD, t.europeSD} {
		if err := render(out, s); err != nil {
			return err
		}
	}
	return nil
}

func (t *translator) azureAndGCESD(out *section, s monv1alpha1.ScrapeConfigSpec) error {
	err := t.sdList(out, "azureSDConfigs", "azure_sd_configs", len(s.AzureSDConfigs), func(sub *translator, i int) (section, error) {
		c := s.AzureSDConfigs[i]
		var g section
		put(&g, "environment", c.Environment)
		if c.AuthenticationMethod != nil {
			put(&g, "authentication_method", string(*c.AuthenticationMethod))
		}
		put(&g, "subscription_id", c.SubscriptionID)
		put(&g, "tenant_id", c.TenantID)
		put(&g, "client_id", c.ClientID)
		if err := sub.putSecret(&g, "client_secret", "clientSecret", c.ClientSecret); err != nil {
			return nil, err
		}
		put(&g, "resource_group", c.ResourceGroup)
		port(&g, c.Port)
		duration(&g, "refresh_interval", c.RefreshInterval)
		return g, sub.client(&g, monv1.HTTPConfigWithoutTLS{BasicAuth: c.BasicAuth, Authorization: c.Authorization, OAuth2: c.OAuth2,
			FollowRedirects: c.FollowRedirects, EnableHTTP2: c.EnableHTTP2}, c.TLSConfig, c.ProxyConfig)
	})
	if err != nil {
		return err
	}
	return t.sdList(out, "gceSDConfigs", "gce_sd_configs", len(s.GCESDConfigs), func(_ *translator, i int) (section, error) {
		c := s.GCESDConfigs[i]
		g := section{{Key: "project", Value: c.Project}, {Key: "zone", Value: c.Zone}}
		put(&g, "filter", c.Filter)
		port(&g, c.Port)
		put(&g, "tag_separator", c.TagSeparator)
		duration(&g, "refresh_interval", c.RefreshInterval)
		return g, nil
	})
}

func (t *translator) openStackSD(out *section, s monv1alpha1.ScrapeConfigSpec) error {
	return t.sdList(out, "openstackSDConfigs", "openstack_sd_configs", len(s.OpenStackSDConfigs), func(sub *translator, i int) (section, error) {
		c := s.OpenStackSDConfigs[i]
		g := section{{Key: "role", Value: lower(c.Role)}, {Key: "region", Value: c.Region}}
		if c.IdentityEndpoint != nil {
			put(&g, "identity_endpoint", string(*c.IdentityEndpoint))
		}
		put(&g, "username", c.Username)
		put(&g, "userid", c.UserID)
		if err := sub.putSecret(&g, "password", "password", c.Password); err != nil {
			return nil, err
		}
		put(&g, "domain_name", c.DomainName)
		put(&g, "domain_id", c.DomainID)
		put(&g, "project_name", c.ProjectName)
		put(&g, "project_id", c.ProjectID)
		put(&g, "application_credential_name", c.ApplicationCredentialName)
		put(&g, "application_credential_id", c.ApplicationCredentialID)
		if err := sub.putSecret(&g, "application_credential_secret", "applicationCredentialSecret", c.ApplicationCredentialSecret); err != nil {
			return nil, err
		}
		put(&g, "all_tenants", c.AllTenants)
		port(&g, c.Port)
		if c.Availability != nil {
			put(&g, "availability", lower(*c.Availability))
		}
		duration(&g, "refresh_interval", c.RefreshInterval)
		return g, sub.tls(&g, c.TLSConfig, nil)
	})
}

// hostingSD renders DigitalOcean, Linode and Hetzner discovery, whose API credentials are the
// HTTP client's authorization (or basic auth for Hetzner Robot).
func (t *translator) hostingSD(out *section, s monv1alpha1.ScrapeConfigSpec) error {
	err := t.sdList(out, "digitalOceanSDConfigs", "digitalocean_sd_configs", len(s.DigitalOceanSDConfigs), func(sub *translator, i int) (section, error) {
		c := s.DigitalOceanSDConfigs[i]
		var g section
		port(&g, c.Port)
		duration(&g, "refresh_interval", c.RefreshInterval)
		return g, sub.client(&g, monv1.HTTPConfigWithoutTLS{Authorization: c.Authorization, OAuth2: c.OAuth2,
			FollowRedirects: c.FollowRedirects, EnableHTTP2: c.EnableHTTP2}, c.TLSConfig, c.ProxyConfig)
	})
	if err != nil {
		return err
	}
	err = t.sdList(out, "linodeSDConfigs", "linode_sd_configs", len(s.LinodeSDConfigs), func(sub *translator, i int) (section, error) {
		c := s.LinodeSDConfigs[i]
		var g section
		put(&g, "region", c.Region)
		port(&g, c.Port)
		put(&g, "tag_separator", c.TagSeparator)
		duration(&g, "refresh_interval", c.RefreshInterval)
		return g, sub.client(&g, monv1.HTTPConfigWithoutTLS{Authorization: c.Authorization, OAuth2: c.OAuth2,
			FollowRedirects: c.FollowRedirects, EnableHTTP2: c.EnableHTTP2}, c.TLSConfig, c.ProxyConfig)
	})
	if err != nil {
		return err
	}
	return t.sdList(out, "hetznerSDConfigs", "hetzner_sd_configs", len(s.HetznerSDConfigs), func(sub *translator, i int) (section, error) {
		c := s.HetznerSDConfigs[i]
		g := section{{Key: "role", Value: lower(c.Role)}}
		port(&g, c.Port)
		put(&g, "label_selector", c.LabelSelector)
		duration(&g, "refresh_interval", c.RefreshInterval)
		return g, sub.client(&g, monv1.HTTPConfigWithoutTLS{BasicAuth: c.BasicAuth, Authorization: c.Authorization, OAuth2: c.OAuth2,
			FollowRedirects: c.FollowRedirects, EnableHTTP2: c.EnableHTTP2}, c.TLSConfig, c.ProxyConfig)
	})
}

// ovhServices are Prometheus' names of the OVHcloud services.
var ovhServices = map[monv1alpha1.OVHService]string{monv1alpha1.OVHServiceVPS: "vps", monv1alpha1.OVHServiceDedicatedServer: "dedicated_server"}

// europeSD renders OVHcloud, Scaleway and IONOS discovery.
func (t *translator) europeSD(out *section, s monv1alpha1.ScrapeConfigSpec) error {
	err := t.sdList(out, "ovhcloudSDConfigs", "ovhcloud_sd_configs", len(s.OVHCloudSDConfigs), func(sub *translator, i int) (section, error) {
		c := s.OVHCloudSDConfigs[i]
		svc, ok := ovhServices[c.Service]
		if !ok {
			return nil, sub.errf("service", "%q is not one of VPS, DedicatedServer", c.Service)
		}
		g := section{{Key: "application_key", Value: c.ApplicationKey}}
		if err := sub.putSecret(&g, "application_secret", "applicationSecret", &c.ApplicationSecret); err != nil {
			return nil, err
		}
		if err := sub.putSecret(&g, "consumer_key", "consumerKey", &c.ConsumerKey); err != nil {
			return nil, err
		}
		put(&g, "service", svc)
		put(&g, "endpoint", c.Endpoint)
		duration(&g, "refresh_interval", c.RefreshInterval)
		return g, nil
	})
	if err != nil {
		return err
	}
	err = t.sdList(out, "scalewaySDConfigs", "scaleway_sd_configs", len(s.ScalewaySDConfigs), func(sub *translator, i int) (section, error) {
		c := s.ScalewaySDConfigs[i]
		g := section{{Key: "access_key", Value: c.AccessKey}}
		if err := sub.putSecret(&g, "secret_key", "secretKey", &c.SecretKey); err != nil {
			return nil, err
		}
		put(&g, "project_id", c.ProjectID)
		put(&g, "role", lower(c.Role))
		port(&g, c.Port)
		if c.ApiURL != nil {
			put(&g, "api_url", string(*c.ApiURL))
		}
		put(&g, "zone", c.Zone)
		put(&g, "name_filter", c.NameFilter)
		put(&g, "tags_filter", c.TagsFilter)
		duration(&g, "refresh_interval", c.RefreshInterval)
		return g, sub.client(&g, monv1.HTTPConfigWithoutTLS{FollowRedirects: c.FollowRedirects, EnableHTTP2: c.EnableHTTP2}, c.TLSConfig, c.ProxyConfig)
	})
	if err != nil {
		return err
	}
	return t.sdList(out, "ionosSDConfigs", "ionos_sd_configs", len(s.IonosSDConfigs), func(sub *translator, i int) (section, error) {
		c := s.IonosSDConfigs[i]
		g := section{{Key: "datacenter_id", Value: c.DataCenterID}}
		port(&g, c.Port)
		duration(&g, "refresh_interval", c.RefreshInterval)
		return g, sub.client(&g, monv1.HTTPConfigWithoutTLS{Authorization: &c.Authorization, OAuth2: c.OAuth2,
			FollowRedirects: c.FollowRedirects, EnableHTTP2: c.EnableHTTP2}, c.TLSConfig, c.ProxyConfig)
	})
}
